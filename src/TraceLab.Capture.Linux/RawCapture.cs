namespace TraceLab.Capture.Linux;

/// <summary>
/// Everything a finished tracefs capture produced: raw per-CPU page files plus the metadata to decode them.
/// </summary>
public sealed class RawCapture
{
    public required int CpuCount { get; init; }
    public required int PageSize { get; init; }
    public required string HeaderPage { get; init; }
    public required string HeaderEvent { get; init; }
    /// <summary>"system/name" → format file text, for every event enabled.</summary>
    public required IReadOnlyDictionary<string, string> EventFormats { get; init; }
    /// <summary>ftrace/print: the trace_marker event.</summary>
    public required string PrintFormat { get; init; }
    public required string SavedCmdlines { get; init; }
    /// <summary>per_cpu/cpuN/stats text, read after tracing stopped.</summary>
    public required IReadOnlyList<string> CpuStats { get; init; }
    public required IReadOnlyList<string> CpuDataFiles { get; init; }
    public required string Clock { get; init; }
    public required string KernelRelease { get; init; }
    /// <summary>Events this kernel lacks (skipped with a warning instead of failing).</summary>
    public required IReadOnlyList<string> MissingEvents { get; init; }
    public required long PagesCopied { get; init; }
}
