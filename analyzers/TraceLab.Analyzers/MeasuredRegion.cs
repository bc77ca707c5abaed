namespace TraceLab.Analyzers;

/// <summary>
/// The span of the trace a report covers: between the workload's TRACELAB_REGION_BEGIN and TRACELAB_REGION_END
/// markers when present, else the whole trace. Intervals are clipped to it; counts are taken only inside it.
/// </summary>
public sealed class MeasuredRegion
{
    public const string BeginMarker = "TRACELAB_REGION_BEGIN";
    public const string EndMarker = "TRACELAB_REGION_END";

    public long Begin { get; private set; } = long.MinValue;
    public long End { get; private set; } = long.MaxValue;
    public bool HasBegin { get; private set; }
    public bool HasEnd { get; private set; }
    /// <summary>Thread that wrote the begin marker (the workload's main thread), 0 if none.</summary>
    public int MarkerTid { get; private set; }

    /// <summary>Returns true when this marker opened the region (the caller then drops what it accumulated before).</summary>
    public bool OnMarker(string text, long timestamp, int tid)
    {
        if (!HasBegin && text.StartsWith(BeginMarker, StringComparison.Ordinal))
        {
            HasBegin = true;
            Begin = timestamp;
            MarkerTid = tid;
            return true;
        }
        if (HasBegin && !HasEnd && text.StartsWith(EndMarker, StringComparison.Ordinal))
        {
            HasEnd = true;
            End = timestamp;
        }
        return false;
    }

    public bool Contains(long t) => t >= Begin && t <= End;

    /// <summary>Length of [a, b] inside the region.</summary>
    public long Overlap(long a, long b)
    {
        var lo = Math.Max(a, Begin);
        var hi = Math.Min(b, End);
        return hi > lo ? hi - lo : 0;
    }
}
