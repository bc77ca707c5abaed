using TraceLab.Analyzers.Locks;

namespace TraceLab.Analyzers.Timeline;

/// <summary>What a thread was doing during a <see cref="TimelineSegment"/>.</summary>
public enum ThreadRunState : byte
{
    /// <summary>On a CPU.</summary>
    Running,
    /// <summary>Woken or preempted, waiting for a CPU.</summary>
    Runnable,
    /// <summary>Switched out voluntarily (sleeping, waiting for a lock or I/O) and not yet woken.</summary>
    Blocked,
}

/// <summary>
/// One state interval of one thread, clipped to the window. <see cref="Cpu"/> is the CPU for running segments, else -1.
/// </summary>
public readonly record struct TimelineSegment(int Tid, ThreadRunState State, long Start, long End, int Cpu);

/// <summary>
/// A wakeup that made <see cref="Wakee"/> runnable; <see cref="Waker"/> is 0 when it came from an interrupt or the idle
/// task.
/// </summary>
public readonly record struct TimelineWake(long Timestamp, int Waker, int Wakee, int Cpu);

/// <summary>
/// A futile wakeup (docs/metrics.md#futile-wakeups): woken at <see cref="WokenAt"/>, blocked again at
/// <see cref="BlockedAt"/> without progress.
/// </summary>
public readonly record struct TimelineFutileWakeup(int Tid, long WokenAt, long BlockedAt);

/// <summary>Everything a <see cref="TimelineAnalyzer"/> recorded, in the order it was seen.</summary>
public sealed class TimelineData
{
    /// <summary>The requested window.</summary>
    public required TimelineWindow Window { get; init; }
    /// <summary>
    /// Absolute window bounds on the trace clock (ns); <see cref="End"/> is clipped to the trace's end.
    /// </summary>
    public long Start { get; init; }
    public long End { get; init; }
    /// <summary>
    /// Where the window is anchored: the region's begin, or the first event when the trace has no begin marker.
    /// </summary>
    public long Anchor { get; init; }
    public required IReadOnlyList<TimelineSegment> Segments { get; init; }
    public required IReadOnlyList<TimelineWake> Wakes { get; init; }
    /// <summary>Counted convoy episodes that overlap the window (unclipped).</summary>
    public required IReadOnlyList<ConvoyEpisode> Episodes { get; init; }
    /// <summary>In-region handoffs whose wakeup or run falls in the window.</summary>
    public required IReadOnlyList<Handoff> Handoffs { get; init; }
    public required IReadOnlyList<TimelineFutileWakeup> FutileWakeups { get; init; }
    /// <summary>True when the item cap was reached and later items in the window were dropped.</summary>
    public bool Truncated { get; init; }
    /// <summary>False when the convoy analysis did not run (no episodes or handoffs can be shown).</summary>
    public bool HasConvoys { get; init; }
    /// <summary>False when the wakeup analysis did not run (no futile wakeups can be shown).</summary>
    public bool HasWakeups { get; init; }
}
