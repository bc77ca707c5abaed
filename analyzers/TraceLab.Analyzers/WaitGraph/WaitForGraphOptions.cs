namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// Bounds and thresholds of <see cref="WaitForGraphAnalyzer"/> (defined in docs/metrics.md#wait-for-graph).
/// </summary>
public sealed record WaitForGraphOptions
{
    /// <summary>Completed waits kept per thread for cascading.</summary>
    public int HistoryCapacity { get; init; } = 32;

    /// <summary>Re-attribution hops after the direct waker; 0 turns cascading off.</summary>
    public int MaxCascadeDepth { get; init; } = 8;

    /// <summary>Edges lighter than this share of the total wait weight are left out when looking for knots.</summary>
    public double KnotMinEdgeShare { get; init; } = 0.01;

    internal void Validate()
    {
        if (HistoryCapacity < 1)
            throw new ArgumentOutOfRangeException(nameof(HistoryCapacity), HistoryCapacity, "must be at least 1");
        if (MaxCascadeDepth < 0)
            throw new ArgumentOutOfRangeException(nameof(MaxCascadeDepth), MaxCascadeDepth, "must not be negative");
        if (KnotMinEdgeShare is < 0 or >= 1)
            throw new ArgumentOutOfRangeException(nameof(KnotMinEdgeShare), KnotMinEdgeShare, "must be in [0, 1)");
    }
}
