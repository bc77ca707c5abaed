namespace TraceLab.Analyzers.Locks;

/// <summary>
/// Sees <see cref="ConvoyAnalyzer"/>'s findings one by one, for viewers (timeline, Perfetto export) that draw them
/// individually; the analyzer's statistics do not depend on whether anyone observes.
/// </summary>
public interface IConvoyObserver
{
    /// <summary>
    /// A confirmed handoff; <paramref name="inRegion"/> says whether it counts in the report (woken inside the measured
    /// region).
    /// </summary>
    void OnHandoff(in Handoff handoff, bool inRegion);

    /// <summary>A convoy episode the report counts (docs/metrics.md#episodes), when it closes.</summary>
    void OnEpisode(in ConvoyEpisode episode);
}

/// <summary>
/// A chain of <see cref="Handoffs"/> handoffs on <see cref="Object"/>: from the first receiver's wakeup
/// (<see cref="Start"/>) to the last receiver running (<see cref="End"/>), unclipped.
/// </summary>
public readonly record struct ConvoyEpisode(LockObject Object, long Start, long End, int Handoffs);
