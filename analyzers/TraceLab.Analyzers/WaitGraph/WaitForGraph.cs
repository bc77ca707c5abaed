namespace TraceLab.Analyzers.WaitGraph;

/// <summary>The wait-for graph over the measured region (definitions in docs/metrics.md#wait-for-graph).</summary>
public sealed class WaitForGraph
{
    private readonly Dictionary<long, WaitEdge> _byPair;
    private readonly double _knotMinEdgeShare;

    internal WaitForGraph(List<WaitEdge> edges, double knotMinEdgeShare, long truncatedCascades)
    {
        edges.Sort((a, b) => a.WeightNs != b.WeightNs ? b.WeightNs.CompareTo(a.WeightNs)
            : a.From != b.From ? a.From.CompareTo(b.From) : a.To.CompareTo(b.To));
        Edges = edges;
        _knotMinEdgeShare = knotMinEdgeShare;
        _byPair = edges.ToDictionary(e => ((long)e.From << 32) | (uint)e.To);

        var waitNs = new Dictionary<int, long>();
        var waitedOnNs = new Dictionary<int, long>();
        foreach (var e in edges)
        {
            waitNs[e.From] = waitNs.GetValueOrDefault(e.From) + e.WeightNs;
            waitedOnNs[e.To] = waitedOnNs.GetValueOrDefault(e.To) + e.WeightNs;
            TotalWaitNs += e.WeightNs;
        }
        WaitNs = waitNs;
        WaitedOnNs = waitedOnNs;
        KnotMinEdgeWeightNs = (long)Math.Ceiling(knotMinEdgeShare * TotalWaitNs);
        Knots = KnotFinder.Find(edges, KnotMinEdgeWeightNs);
        TruncatedCascades = truncatedCascades;
    }

    /// <summary>
    /// Knots of the subgraph of edges leaving <paramref name="tids"/> (e.g. one process), with the significance
    /// threshold taken relative to their wait time rather than the whole trace's, where long idle waits of unrelated
    /// threads would drown a busy process's edges.
    /// </summary>
    public (IReadOnlyList<WaitKnot> Knots, long MinEdgeWeightNs) KnotsAmong(IReadOnlyCollection<int> tids)
    {
        var set = tids as IReadOnlySet<int> ?? tids.ToHashSet();
        var edges = Edges.Where(e => set.Contains(e.From)).ToList();
        var min = (long)Math.Ceiling(_knotMinEdgeShare * edges.Sum(e => e.WeightNs));
        return (KnotFinder.Find(edges, min), min);
    }

    /// <summary>Heaviest first.</summary>
    public IReadOnlyList<WaitEdge> Edges { get; }

    /// <summary>Heaviest internal weight first.</summary>
    public IReadOnlyList<WaitKnot> Knots { get; }

    /// <summary>Per thread: its in-region wait time, the sum of its out-edges.</summary>
    public IReadOnlyDictionary<int, long> WaitNs { get; }

    /// <summary>
    /// Per vertex (threads and pseudo-vertices): wait time of others attributed to it, the sum of its in-edges.
    /// </summary>
    public IReadOnlyDictionary<int, long> WaitedOnNs { get; }

    public long TotalWaitNs { get; }

    /// <summary>
    /// Per thread still blocked when the trace ended: the in-region part of that last wait, which went to
    /// <see cref="WaitVertex.Unknown"/> (the rest of a thread's unknown weight had no wakeup logged).
    /// </summary>
    public IReadOnlyDictionary<int, long> OpenAtEndNs { get; init; } = new Dictionary<int, long>();

    /// <summary>Edges lighter than this were left out of the knot search.</summary>
    public long KnotMinEdgeWeightNs { get; }

    /// <summary>Cascade lookups that may have missed waits because a thread's history had overflowed.</summary>
    public long TruncatedCascades { get; }

    public WaitEdge Edge(int from, int to) =>
        _byPair.TryGetValue(((long)from << 32) | (uint)to, out var e) ? e : new WaitEdge(from, to, 0, 0);

    /// <summary>
    /// The <paramref name="n"/> vertices the threads in <paramref name="tids"/> waited on longest (members included:
    /// waiting on each other is what lock contention inside a process looks like), with each one's share of the set's
    /// total wait time. The shares of all vertices add up to 1.
    /// </summary>
    public IReadOnlyList<WaitedOnShare> TopWaitedOn(IReadOnlyCollection<int> tids, int n)
    {
        var members = tids as IReadOnlySet<int> ?? tids.ToHashSet();
        var byTarget = new Dictionary<int, long>();
        long total = 0;
        foreach (var e in Edges)
        {
            if (!members.Contains(e.From)) continue;
            byTarget[e.To] = byTarget.GetValueOrDefault(e.To) + e.WeightNs;
            total += e.WeightNs;
        }
        return byTarget
            .OrderByDescending(p => p.Value).ThenBy(p => p.Key)
            .Take(n)
            .Select(p => new WaitedOnShare(p.Key, p.Value, (double)p.Value / total))
            .ToList();
    }
}
