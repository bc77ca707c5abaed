using TraceLab.Core;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// Events the scan decoded while it read their records, held until the merge delivers them: a ring of (by default)
/// <see cref="DefaultCapacity"/> events numbered in scan order (a run's decoded events are a range of those numbers).
/// Decoding once at the scan spares the delivery a second walk over the records and a second parse of every sample
/// (docs/performance-history.md#decode-once). When the ring is full, because the rounds are larger than it (a busy
/// system-wide perf.data recorded here has most rounds under 50 events and a few of 100,000; perf record -m 64M writes
/// ~1 M events a round), the runs go on as file ranges decoded at delivery (<see cref="SampleRun"/>), so memory stays
/// this ring's size.
/// </summary>
internal sealed class DecodedEvents
{
    /// <summary>
    /// Events held at most: 2^13, under 1 MB with their offsets, so that the events are still in the CPU's cache when
    /// delivered. Measured on a busy system-wide perf.data (docs/performance-history.md#decode-once): read + all
    /// analyses 2^12 to 2^16 equally ~5 % faster than decoding every event at delivery, 2^18 (31 MB, the file's two
    /// largest rounds) ~9 % slower than 2^16 (Native AOT).
    /// </summary>
    public const int DefaultCapacity = 1 << 13;

    /// <summary>Dropped at <see cref="Release"/>: the second read of `analyze` (the timeline's) has its own.</summary>
    private KernelEvent[] _events;
    private long[] _offsets;
    private readonly int _capacity;
    private readonly int _mask;
    private readonly Func<long> _oldestNeeded;

    /// <param name="capacity">A power of two, or 0: no ring (every <see cref="TryAdd"/> is refused).</param>
    /// <param name="oldestNeeded">The lowest number still to be delivered (<see cref="long.MaxValue"/>: none).</param>
    public DecodedEvents(int capacity, Func<long> oldestNeeded)
    {
        if (capacity < 0 || (capacity & (capacity - 1)) != 0)
            throw new ArgumentOutOfRangeException(nameof(capacity), capacity, "0 or a power of two");
        _capacity = capacity;
        _events = new KernelEvent[capacity];
        _offsets = new long[capacity];
        _mask = capacity - 1;
        _oldestNeeded = oldestNeeded;
    }

    /// <summary>Events added in all (they were decoded once, at the scan); the next one's number.</summary>
    public long Added { get; private set; }

    /// <summary>Lowest number whose slot may still be read (everything before it was delivered).</summary>
    private long _tail;

    /// <summary>
    /// Full when last asked and nothing delivered since: not asked again (asking looks at every held run) until
    /// <see cref="Delivered"/>.
    /// </summary>
    private bool _full;

    /// <summary>The merge delivered events: their slots may be free.</summary>
    public void Delivered() => _full = false;

    /// <summary>
    /// Takes the next slot for an event whose record is at <paramref name="recordOffset"/>; false when every slot
    /// still holds an event to deliver.
    /// </summary>
    public bool TryAdd(long recordOffset, out long number)
    {
        if (Added - _tail >= _capacity)
        {
            // Recomputed only when the ring looks full: the runs deliver out of each other's order.
            if (!_full && _capacity > 0) _tail = Math.Min(Added, _oldestNeeded());
            if (Added - _tail >= _capacity)
            {
                _full = true;
                number = -1;
                return false;
            }
        }

        number = Added++;
        _offsets[(int)number & _mask] = recordOffset;
        return true;
    }

    /// <summary>The event numbered <paramref name="number"/> (to decode into, or to deliver).</summary>
    public ref KernelEvent this[long number] => ref _events[(int)number & _mask];

    /// <summary>File offset of the record the event numbered <paramref name="number"/> came from.</summary>
    public long OffsetOf(long number) => _offsets[(int)number & _mask];

    /// <summary>
    /// Lets the ring go once the read is over, whoever still holds the reader (it is a few MB, with strings: marker
    /// texts, exec names); nothing may be added or read after.
    /// </summary>
    public void Release()
    {
        _events = [];
        _offsets = [];
    }
}
