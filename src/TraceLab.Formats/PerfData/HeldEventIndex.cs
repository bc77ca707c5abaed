using System.Buffers;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// What the scan learnt about each held event (time, CPU, where its record and raw payload are), in file order, so
/// that the merge delivers it without walking and parsing its record again: 16 bytes an event instead of the ~100
/// of its record. Numbered by a running sequence number, each <see cref="SampleRun"/> a range of it; an entry is
/// free once its run's cursor has passed it (<see cref="Release"/>). Stored in chunks of 64 Ki entries (1 MiB),
/// taken as needed and given back as the cursors pass them (pooled: a second read reuses them), so what is held
/// follows what is awaiting delivery — without copying or garbage when that grows. Capped (by default 16 MiB,
/// ~1 M events): beyond that (rounds of more than ~0.5 M events) new runs walk their records again instead.
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
    private const int ChunkShift = 16;
    private const int ChunkEntries = 1 << ChunkShift;
    private const int ChunkMask = ChunkEntries - 1;
    private readonly Entry[]?[] _chunks;
    private readonly int _slotMask;
    /// <summary>Entries the chunks can hold at once: one chunk fewer than the slots, so the head never reaches the tail's chunk.</summary>
    private readonly long _capacity;
    private long _tail;
    private long _peak;
    private Entry[]? _headChunk;

    /// <param name="maxEntries">Cap (a power of two; tests make it small).</param>
    public HeldEventIndex(int maxEntries = DefaultMaxEntries)
    {
        var slots = Math.Max(2, maxEntries >> ChunkShift);
        _chunks = new Entry[]?[slots];
        _slotMask = slots - 1;
        _capacity = Math.Min(maxEntries, (long)(slots - 1) * ChunkEntries);
    }

    /// <summary>Sequence number the next entry gets.</summary>
    public long Head { get; private set; }

    /// <summary>Entries held at once, at most (counted when entries are freed: only then does the count go down).</summary>
    public int PeakCount => (int)Math.Max(_peak, Head - _tail);

    public bool Full => Head - _tail >= _capacity;

    /// <summary>The next entry starts a chunk: a good time to give back the chunks the cursors have passed.</summary>
    public bool AtChunkStart => (Head & ChunkMask) == 0;

    /// <summary>Adds an entry (the caller made sure the index is not <see cref="Full"/>).</summary>
    public void Add(long time, int cpu, uint recordDelta, int rawDelta)
    {
        var at = (int)(Head & ChunkMask);
        if (at == 0 || _headChunk is null) _headChunk = Chunk(Head);
        ref var e = ref _headChunk[at];
        e.Time = time;
        e.RecordDelta = recordDelta;
        e.Cpu = (ushort)cpu;
        e.RawDelta = (ushort)rawDelta;
        Head++;
    }

    /// <summary>The entry numbered <paramref name="seq"/> (not yet released).</summary>
    public ref readonly Entry At(long seq) => ref _chunks[(int)(seq >> ChunkShift) & _slotMask]![seq & ChunkMask];

    /// <summary>No cursor reads the entries before <paramref name="seq"/> any more: whole chunks before it go back.</summary>
    public void Release(long seq)
    {
        _peak = Math.Max(_peak, Head - _tail);
        seq = Math.Min(seq, Head);
        if (seq <= _tail) return;
        for (var c = _tail >> ChunkShift; c < seq >> ChunkShift; c++) Return(c);
        _tail = seq;
    }

    /// <summary>Gives every chunk back (the read is over).</summary>
    public void Clear()
    {
        for (var i = 0; i < _chunks.Length; i++)
        {
            if (_chunks[i] is { } chunk) ArrayPool<Entry>.Shared.Return(chunk);
            _chunks[i] = null;
        }

        _headChunk = null;
        _tail = Head;
    }

    private Entry[] Chunk(long seq)
    {
        ref var slot = ref _chunks[(int)(seq >> ChunkShift) & _slotMask];
        return slot ??= ArrayPool<Entry>.Shared.Rent(ChunkEntries);
    }

    private void Return(long chunk)
    {
        ref var slot = ref _chunks[(int)chunk & _slotMask];
        if (slot is null) return;
        ArrayPool<Entry>.Shared.Return(slot);
        slot = null;
    }
}
