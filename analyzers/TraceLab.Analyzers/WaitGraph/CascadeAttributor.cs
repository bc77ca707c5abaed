namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// Splits one wait of a thread among the vertices that really held it up (wPerf cascading): the part of the wait
/// during which the direct waker was itself waiting goes to whoever ended that wait, recursively. Weight is conserved:
/// the pieces always add up to the interval.
/// </summary>
internal sealed class CascadeAttributor
{
    private readonly WaitStateTable _threads;
    private readonly int _maxDepth;
    /// <summary>
    /// [0] is the waiter, [k] the vertex reached after k − 1 hops; a waker already on it would close a cycle.
    /// </summary>
    private readonly int[] _path;
    private int[] _culprits = new int[8];
    private long[] _weights = new long[8];
    private int _count;

    public CascadeAttributor(WaitStateTable threads, int maxDepth)
    {
        _threads = threads;
        _maxDepth = maxDepth;
        _path = new int[maxDepth + 2];
    }

    /// <summary>Lookups that reached back past a history's oldest retained wait after it had overflowed.</summary>
    public long TruncatedLookups { get; set; }

    /// <summary>
    /// Adds the pieces of [<paramref name="start"/>, <paramref name="end"/>] to <paramref name="edges"/>, one count per
    /// culprit. <paramref name="wakerSlot"/>: <see cref="WaitStateTable.SlotOfVertex"/> of <paramref name="waker"/>.
    /// </summary>
    public void Attribute(int waiter, long start, long end, int waker, int wakerSlot, WaitEdgeTable edges)
    {
        _count = 0;
        _path[0] = waiter;
        Cascade(start, end, waker, wakerSlot, 0);
        for (var i = 0; i < _count; i++)
            if (_weights[i] > 0) edges.Add(waiter, _culprits[i], _weights[i]);
    }

    private void Cascade(long start, long end, int culprit, int culpritSlot, int hops)
    {
        // culpritSlot is -1 exactly when culprit is no thread (a pseudo-vertex), which has no state.
        if (hops >= _maxDepth || _threads.AtSlot(culpritSlot) is not { } state)
        {
            Credit(culprit, end - start);
            return;
        }
        _path[hops + 1] = culprit;
        ref readonly var history = ref state.History;
        if (history.EvictedUntil > start) TruncatedLookups++;
        long passedOn = 0;
        for (var i = 0; i < history.Count; i++)
        {
            ref readonly var r = ref history.NewestFirst(i);
            if (r.End <= start) break;
            var lo = Math.Max(start, r.Start);
            var hi = Math.Min(end, r.End);
            if (hi <= lo || OnPath(r.Waker, hops + 1)) continue;
            Cascade(lo, hi, r.Waker, r.WakerSlot, hops + 1);
            passedOn += hi - lo;
        }
        Credit(culprit, end - start - passedOn);
    }

    private bool OnPath(int vertex, int last)
    {
        for (var i = 0; i <= last; i++)
            if (_path[i] == vertex) return true;
        return false;
    }

    private void Credit(int culprit, long ns)
    {
        if (ns <= 0) return;
        for (var i = 0; i < _count; i++)
        {
            if (_culprits[i] != culprit) continue;
            _weights[i] += ns;
            return;
        }
        if (_count == _culprits.Length)
        {
            // Grows to the most culprits one wait has had, then stays: no allocation in steady state.
            Array.Resize(ref _culprits, _count * 2);
            Array.Resize(ref _weights, _count * 2);
        }
        _culprits[_count] = culprit;
        _weights[_count] = ns;
        _count++;
    }
}
