namespace TraceLab.Core;

/// <summary>What a reader knows about a trace as a whole.</summary>
public sealed class TraceInfo
{
    /// <summary>"tracefs", "etw", "perf".</summary>
    public required string Backend { get; init; }
    public required string TraceFile { get; init; }
    public int CpuCount { get; set; }
    /// <summary>Events lost per CPU as the capture reported them (overrun + dropped, or ETW EventsLost); null when unknown.</summary>
    public long[]? LostEventsPerCpu { get; set; }
    /// <summary>Pages in which the ring buffer flagged missed events (RB_MISSED_EVENTS), per CPU.</summary>
    public long[]? PagesWithMissedEvents { get; set; }
    public string? TraceClock { get; set; }
    public string? KernelRelease { get; set; }
    /// <summary>Number of events decoded (all kinds, including <see cref="KernelEventKind.Other"/>); filled by Read.</summary>
    public long EventCount { get; set; }
    public long FirstTimestamp { get; set; }
    public long LastTimestamp { get; set; }

    public long LostEvents => LostEventsPerCpu?.Sum() ?? 0;
}
