namespace TraceLab.Formats.PerfData;

/// <summary>
/// What the scan learnt about each held event (time, CPU, where its record and raw payload are), in file order, so
/// that the merge delivers it without walking and parsing its record again: 16 bytes an event instead of the ~100
/// of its record. A ring numbered by a running sequence number, each <see cref="SampleRun"/> a range of it; an entry
/// is free once its run's cursor has passed it (<see cref="Release"/>). Capped at <see cref="DefaultMaxEntries"/>: beyond
/// that (rounds of more than ~1 M events) runs walk their records again instead.
/// </summary>
internal sealed class HeldEventIndex
{
    internal struct Entry
    {
        public long Time;
        /// <summary>File offset of the event's record, counted from its run's start.</summary>
        public uint RecordDelta;
        public ushort Cpu;
        /// <summary>Where the raw payload starts, counted from the record (its u32 size is just before it).</summary>
        public ushort RawDelta;
    }

    /// <summary>
    /// Entries at most: 16 MiB. perf record -m 64M on 2 CPUs writes rounds of up to ~65 MB (~650 k events), and two
    /// rounds are held at once.
    /// </summary>
    public const int DefaultMaxEntries = 1 << 20;
    private const int InitialCapacity = 1 << 12;
    private readonly int _maxEntries;
    private Entry[] _entries;
    private long _mask;
    private long _tail;

    /// <param name="maxEntries">Cap (a power of two; tests make it small).</param>
    public HeldEventIndex(int maxEntries = DefaultMaxEntries)
    {
        _maxEntries = maxEntries;
        _entries = new Entry[Math.Min(InitialCapacity, maxEntries)];
        _mask = _entries.Length - 1;
    }

    /// <summary>Sequence number the next entry gets.</summary>
    public long Head { get; private set; }

    /// <summary>Entries held at once, at most (counted when entries are freed: only then does the count go down).</summary>
    public int PeakCount => (int)Math.Max(_peak, Head - _tail);

    private long _peak;

    public bool Full => Head - _tail == _entries.Length;

    /// <summary>Adds an entry (the caller made sure the ring is not <see cref="Full"/>).</summary>
    public void Add(long time, int cpu, uint recordDelta, int rawDelta)
    {
        ref var e = ref _entries[Head & _mask];
        e.Time = time;
        e.RecordDelta = recordDelta;
        e.Cpu = (ushort)cpu;
        e.RawDelta = (ushort)rawDelta;
        Head++;
    }

    /// <summary>The entry numbered <paramref name="seq"/> (not yet released).</summary>
    public ref readonly Entry At(long seq) => ref _entries[seq & _mask];

    /// <summary>No cursor reads the entries before <paramref name="seq"/> any more.</summary>
    public void Release(long seq)
    {
        _peak = Math.Max(_peak, Head - _tail);
        if (seq > _tail) _tail = Math.Min(seq, Head);
    }

    /// <summary>Doubles the ring, unless it has reached its cap.</summary>
    public bool TryGrow()
    {
        if (_entries.Length >= _maxEntries) return false;
        var bigger = new Entry[_entries.Length * 2];
        var mask = bigger.Length - 1L;
        for (var s = _tail; s < Head; s++) bigger[s & mask] = _entries[s & _mask];
        _entries = bigger;
        _mask = mask;
        return true;
    }
}
