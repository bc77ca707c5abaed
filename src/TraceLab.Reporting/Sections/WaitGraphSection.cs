using TraceLab.Analyzers.WaitGraph;
using TraceLab.Core;

namespace TraceLab.Reporting.Sections;

/// <summary>report.json "waitGraph": the wPerf-style wait-for graph seen from the reported threads.</summary>
public sealed class WaitGraphSection
{
    /// <summary>Wait time of the reported threads in the region (the denominator of every share).</summary>
    public long WaitNs { get; init; }
    public long KnotMinEdgeWeightNs { get; init; }
    public long TruncatedCascades { get; init; }
    /// <summary>Wait time attributed to "unknown" (docs/metrics.md#wait-for-graph).</summary>
    public long UnknownNs { get; init; }
    /// <summary>Of <see cref="UnknownNs"/>: the last waits of threads still blocked when the trace ended.</summary>
    public long OpenAtEndNs { get; init; }
    /// <summary>Wait time attributed to "kernel/irq": interrupt wakeups the trace does not tell apart.</summary>
    public long KernelIrqNs { get; init; }
    /// <summary>What the reported threads, together, waited on (threads and pseudo-vertices), heaviest first.</summary>
    public List<WaitedOnSection> WaitedOn { get; init; } = [];
    /// <summary>Edges leaving the reported threads, heaviest first.</summary>
    public List<WaitEdgeSection> Edges { get; init; } = [];
    /// <summary>Knots (strongly connected sets over significant edges) that contain a reported thread.</summary>
    public List<WaitKnotSection> Knots { get; init; } = [];
}

public sealed class WaitedOnSection
{
    public int Vertex { get; init; }
    public required string Name { get; init; }
    public long WeightNs { get; init; }
    public double Share { get; init; }
}

public sealed class WaitEdgeSection
{
    public int From { get; init; }
    public int To { get; init; }
    public required string ToName { get; init; }
    public long WeightNs { get; init; }
    public long Count { get; init; }
}

public sealed class WaitKnotSection
{
    public List<int> Vertices { get; init; } = [];
    public List<string> Names { get; init; } = [];
    public long InternalWeightNs { get; init; }
    /// <summary>No significant edge leaves the knot (except to "unknown"): it must contain the bottleneck.</summary>
    public bool IsSink { get; init; }
    /// <summary>Internal weight / the reported threads' wait time.</summary>
    public double ShareOfWait { get; init; }
}

internal static class WaitGraphSectionBuilder
{
    private const int TopVertices = 8, TopEdges = 16;

    public static WaitGraphSection Build(WaitForGraph g, IReadOnlyList<int> tids, ThreadTable names)
    {
        var selected = tids.ToHashSet();
        var wait = tids.Sum(t => g.WaitNs.GetValueOrDefault(t));
        string Name(int v) => WaitVertex.IsThread(v) ? $"{names.NameOf(v)} ({v})" : WaitVertex.Name(v);
        var (knots, min) = g.KnotsAmong(selected);
        return new WaitGraphSection
        {
            WaitNs = wait,
            KnotMinEdgeWeightNs = min,
            TruncatedCascades = g.TruncatedCascades,
            UnknownNs = tids.Sum(t => g.Edge(t, WaitVertex.Unknown).WeightNs),
            OpenAtEndNs = tids.Sum(t => g.OpenAtEndNs.GetValueOrDefault(t)),
            KernelIrqNs = tids.Sum(t => g.Edge(t, WaitVertex.KernelIrq).WeightNs),
            WaitedOn = g.TopWaitedOn(tids, TopVertices)
                .Select(s => new WaitedOnSection
                {
                    Vertex = s.Vertex,
                    Name = Name(s.Vertex),
                    WeightNs = s.WeightNs,
                    Share = Math.Round(s.Share, 4)
                }).ToList(),
            Edges = g.Edges.Where(e => selected.Contains(e.From)).Take(TopEdges)
                .Select(e => new WaitEdgeSection
                {
                    From = e.From,
                    To = e.To,
                    ToName = Name(e.To),
                    WeightNs = e.WeightNs,
                    Count = e.Count
                }).ToList(),
            Knots = knots.Where(k => k.Vertices.Any(selected.Contains))
                .Select(k => new WaitKnotSection
                {
                    Vertices = [.. k.Vertices],
                    Names = k.Vertices.Select(Name).ToList(),
                    InternalWeightNs = k.InternalWeightNs,
                    IsSink = k.IsSink,
                    ShareOfWait = wait > 0 ? Math.Round((double)k.InternalWeightNs / wait, 4) : 0,
                }).ToList(),
        };
    }
}
