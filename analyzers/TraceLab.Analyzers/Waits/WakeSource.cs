namespace TraceLab.Analyzers.Waits;

/// <summary>
/// Who or what ended a blocked interval, as far as the wakeup event tells (docs/metrics.md#wake-sources).
/// </summary>
public enum WakeSource
{
    /// <summary>A thread of the waiter's own process (not signalling).</summary>
    PeerThread,
    /// <summary>A thread of another process (not signalling).</summary>
    OtherProcess,
    /// <summary>A thread inside kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo or pidfd_send_signal.</summary>
    Signal,
    /// <summary>Hard-interrupt context (or the idle task): timers and device completions.</summary>
    HardIrq,
    /// <summary>Soft-interrupt context: network receive, block completions, timers run as softirq.</summary>
    SoftIrq,
    /// <summary>
    /// No wakeup was logged before the thread ran again (a lost or unrecorded wakeup), or the trace ended.
    /// </summary>
    None,
}

/// <summary>Names and the count of <see cref="WakeSource"/> values.</summary>
public static class WakeSources
{
    /// <summary>Number of sources (arrays indexed by source have this length).</summary>
    public const int Count = 6;

    /// <summary>Every source in report order.</summary>
    public static IReadOnlyList<WakeSource> All { get; } =
    [
        WakeSource.PeerThread, WakeSource.OtherProcess, WakeSource.Signal, WakeSource.HardIrq, WakeSource.SoftIrq,
        WakeSource.None,
    ];

    /// <summary>The name report.json and the tables use.</summary>
    public static string Name(WakeSource s) => s switch
    {
        WakeSource.PeerThread => "peer thread",
        WakeSource.OtherProcess => "other process",
        WakeSource.Signal => "signal",
        WakeSource.HardIrq => "hardirq",
        WakeSource.SoftIrq => "softirq",
        _ => "none logged",
    };
}
