namespace TraceLab.Core;

/// <summary>
/// What a reader knows about a trace as a whole: an immutable value (<see cref="IKernelTraceReader.Info"/> says when
/// it is complete).
/// </summary>
public sealed record TraceInfo
{
    /// <summary>"tracefs", "etw", "perf".</summary>
    public required string Backend { get; init; }
    public required string TraceFile { get; init; }
    public int CpuCount { get; init; }
    /// <summary>
    /// Events lost per CPU as the capture reported them (overrun + dropped, or ETW EventsLost); null when unknown.
    /// </summary>
    public long[]? LostEventsPerCpu { get; init; }
    /// <summary>Pages in which the ring buffer flagged missed events (RB_MISSED_EVENTS), per CPU.</summary>
    public long[]? PagesWithMissedEvents { get; init; }
    public string? TraceClock { get; init; }
    /// <summary>
    /// The ring buffers a trace.dat holds ("" = the top-level buffer, else trace instance names), in file order;
    /// null for formats without buffers.
    /// </summary>
    public IReadOnlyList<string>? Buffers { get; init; }
    /// <summary>
    /// The buffer whose events were read (one of <see cref="Buffers"/>); null for formats without buffers.
    /// </summary>
    public string? Buffer { get; init; }
    public string? KernelRelease { get; init; }
    /// <summary>
    /// Number of events decoded (all kinds, including <see cref="KernelEventKind.Other"/>); known after Read.
    /// </summary>
    public long EventCount { get; init; }
    public long FirstTimestamp { get; init; }
    public long LastTimestamp { get; init; }

    /// <summary>
    /// Events whose type id has no format in the trace; delivered as <see cref="KernelEventKind.Other"/>.
    /// </summary>
    public long UnknownEvents { get; init; }
    /// <summary>Event formats the reader could not understand and left out (their events count as unknown).</summary>
    public int SkippedFormats { get; init; }

    /// <summary>
    /// Bytes of event data a salvaging read left out after damage, per CPU; null when nothing was skipped.
    /// </summary>
    public long[]? SkippedBytesPerCpu { get; init; }
    public long SkippedBytes => SkippedBytesPerCpu?.Sum() ?? 0;
    /// <summary>
    /// What a salvaging read skipped and why (per CPU: from which offset, how many bytes and pages); null when intact.
    /// </summary>
    public string? Damage { get; init; }

    public long LostEvents => LostEventsPerCpu?.Sum() ?? 0;

    /// <summary>
    /// False when the trace cannot hold marker events (<see cref="KernelEventKind.Marker"/>): a perf.data recorded
    /// without ftrace's print event. Then no measured region can begin, and the HTML timeline stops following threads
    /// once past its window (the analyzers' results are the same either way).
    /// </summary>
    public bool MayHaveMarkers { get; init; } = true;
}
