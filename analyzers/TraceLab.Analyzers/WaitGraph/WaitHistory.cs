namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// The most recent completed waits of one thread, oldest overwritten first. A thread's waits never overlap and are
/// added in the order they end, so newest-first is also latest-end-first and a lookup can stop at the first record
/// that ends before the interval it looks for.
/// </summary>
/// <remarks>
/// A mutable struct kept as a field of <see cref="ThreadWaitState"/> (never copied: accessed through the field or a
/// <c>ref</c>), so a cascade step reads the records without going through another object.
/// </remarks>
internal struct WaitHistory
{
    /// <summary>Records a history starts with: it grows, doubling, to its capacity only as waits accumulate (most
    /// threads of a whole-system trace wait a few times; 32 records are 768 bytes).</summary>
    private const int InitialRecords = 2;
    private readonly int _capacity;
    private WaitRecord[] _records;
    private int _next;

    public WaitHistory(int capacity)
    {
        _capacity = capacity;
        _records = new WaitRecord[Math.Min(capacity, InitialRecords)];
    }

    public int Count { readonly get; private set; }

    /// <summary>
    /// End of the newest record overwritten so far. A lookup for an interval starting before this may be missing
    /// overlapping waits that no longer fit.
    /// </summary>
    public long EvictedUntil { readonly get; private set; } = long.MinValue;

    public void Add(in WaitRecord record)
    {
        if (Count == _records.Length && Count < _capacity) Grow();
        if (Count == _records.Length) EvictedUntil = _records[_next].End;
        else Count++;
        _records[_next] = record;
        if (++_next == _records.Length) _next = 0; // no modulo: a division per wait and per lookup step adds up
    }

    /// <summary>
    /// A larger array for a full history that has never evicted: its records are in order from index 0 (oldest), so
    /// they keep their places and the next one goes after them.
    /// </summary>
    private void Grow()
    {
        Array.Resize(ref _records, Math.Min(_capacity, _records.Length * 2));
        _next = Count;
    }

    /// <summary>0 is the newest record, <see cref="Count"/> − 1 the oldest retained.</summary>
    public readonly ref readonly WaitRecord NewestFirst(int index)
    {
        // index < Count ≤ capacity, so one wrap at most.
        var i = _next - 1 - index;
        if (i < 0) i += _records.Length;
        return ref _records[i];
    }
}
