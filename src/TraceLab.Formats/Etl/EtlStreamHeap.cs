namespace TraceLab.Formats.Etl;

/// <summary>
/// A binary min-heap of CPU streams on (current time stamp, CPU): the k-way merge that puts the per-CPU event
/// streams into one time order. Equal times come out in CPU order, so the result is deterministic.
/// </summary>
internal sealed class EtlStreamHeap
{
    private readonly EtlCpuStream[] _items;

    public EtlStreamHeap(int capacity) => _items = new EtlCpuStream[capacity];

    public int Count { get; private set; }

    public EtlCpuStream Top => _items[0];

    public void Push(EtlCpuStream s)
    {
        var i = Count++;
        while (i > 0)
        {
            var parent = (i - 1) >> 1;
            if (!Before(s, _items[parent])) break;
            _items[i] = _items[parent];
            i = parent;
        }

        _items[i] = s;
    }

    public void Pop()
    {
        var last = _items[--Count];
        _items[Count] = null!;
        if (Count > 0) SiftDown(last);
    }

    /// <summary>The top stream moved to its next event: put it back in place.</summary>
    public void ReplaceTop(EtlCpuStream s) => SiftDown(s);

    private void SiftDown(EtlCpuStream s)
    {
        var i = 0;
        while (true)
        {
            var child = 2 * i + 1;
            if (child >= Count) break;
            if (child + 1 < Count && Before(_items[child + 1], _items[child])) child++;
            if (!Before(_items[child], s)) break;
            _items[i] = _items[child];
            i = child;
        }

        _items[i] = s;
    }

    private static bool Before(EtlCpuStream a, EtlCpuStream b) =>
        a.Timestamp < b.Timestamp || (a.Timestamp == b.Timestamp && a.Cpu < b.Cpu);
}
