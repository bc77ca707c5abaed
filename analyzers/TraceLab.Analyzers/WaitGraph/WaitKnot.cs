namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// A strongly connected set of threads over the significant edges: every member waits, directly or transitively,
/// on every other. <paramref name="InternalWeightNs"/> sums all edges (significant or not) between members.
/// <paramref name="IsSink"/>: no significant edge leaves the set except to <see cref="WaitVertex.Unknown"/>, i.e. a
/// wPerf knot, which must contain a bottleneck.
/// </summary>
public sealed record WaitKnot(IReadOnlyList<int> Vertices, long InternalWeightNs, bool IsSink);
