using System.Text.Json.Serialization;
using TraceLab.Analyzers;
using TraceLab.Reporting.Charts;
using TraceLab.Reporting.Findings;
using TraceLab.Reporting.Sections;
using TraceLab.Workloads;

namespace TraceLab.Reporting;

/// <summary>
/// report.json: every field is defined in docs/report-schema.md and docs/metrics.md. The analyses' sections sit
/// between <see cref="Threads"/> and <see cref="Warnings"/>, in <see cref="AnalysisReports.All"/> order, each under its
/// registration's <see cref="IAnalysisReport.JsonName"/> (<see cref="RunReportJsonConverter"/>).
/// </summary>
[JsonConverter(typeof(RunReportJsonConverter))]
public sealed class RunReport
{
    private readonly Dictionary<string, object> _sections = new();

    public int SchemaVersion { get; init; } = 2;
    public RunSection? Run { get; set; }
    public required CaptureSection Capture { get; init; }
    public required RegionSection Region { get; init; }
    public ProcessSection? Process { get; set; }
    /// <summary>
    /// The analyses that ran (threads, kernel, convoys, wakeups, smp, waitgraph); absent sections were not selected.
    /// </summary>
    public List<string> Analyses { get; init; } = [];
    /// <summary>
    /// Per-thread scheduler accounting; always computed (the other analyses build on it), listed when "threads" is
    /// selected.
    /// </summary>
    public required List<ThreadSection> Threads { get; init; }
    /// <summary>Every process with a thread active in the region, ranked (docs/metrics.md, "Processes").</summary>
    public List<ProcessSummary> Processes { get; init; } = [];
    /// <summary>
    /// The processes outside the target, summed; null when the report is not about particular processes.
    /// </summary>
    public RestOfSystemSection? RestOfSystem { get; init; }
    /// <summary>
    /// The system overview of a report without a target process (docs/metrics.md, "System overview"); null when the
    /// report is about particular processes.
    /// </summary>
    public SystemSection? System { get; init; }
    /// <summary>
    /// TraceLab's own processes, left out of everything else, and their cost (docs/metrics.md#self-exclusion); null
    /// when the trace does not name them (a trace TraceLab did not record).
    /// </summary>
    public SelfCostSection? Self { get; init; }
    /// <summary>What the processes `--exclude-pid` left out cost; null without the option.</summary>
    public SelfCostSection? Excluded { get; init; }

    /// <summary>
    /// The call stacks of waits and wakes and the lock names they give (docs/report-schema.md#stacks); null when the
    /// trace recorded no stacks.
    /// </summary>
    public Stacks.StacksSection? Stacks { get; set; }
    public List<string> Warnings { get; init; } = [];

    /// <summary>The data of report.html's charts (not part of report.json: it is drawn, not read back).</summary>
    [JsonIgnore]
    public ReportCharts Charts { get; set; } = ReportCharts.None;

    /// <summary>The section of <paramref name="analysis"/>, or null when it did not run.</summary>
    public object? SectionOf(IAnalysisReport analysis) =>
        analysis.JsonName is { } name ? _sections.GetValueOrDefault(name) : null;

    /// <summary>Sets (or, with null, removes) the section of <paramref name="analysis"/>.</summary>
    public void SetSection(IAnalysisReport analysis, object? section)
    {
        var name = analysis.JsonName
            ?? throw new ArgumentException($"{analysis.Analysis.Name} has no report.json section");
        if (section is null) _sections.Remove(name);
        else if (analysis.SectionType is { } type && !type.IsInstanceOfType(section))
            throw new ArgumentException($"{name}: a {section.GetType().Name}, not a {type.Name}");
        else _sections[name] = section;
    }

    // Typed shortcuts for the built-in sections (a new analysis needs none: SectionOf serves it).
    public KernelSection? Kernel
    {
        get => SectionOf(AnalysisReports.Kernel) as KernelSection;
        init => SetSection(AnalysisReports.Kernel, value);
    }

    public ConvoySection? Convoys
    {
        get => SectionOf(AnalysisReports.Convoys) as ConvoySection;
        init => SetSection(AnalysisReports.Convoys, value);
    }

    public WakeupSection? Wakeups
    {
        get => SectionOf(AnalysisReports.Wakeups) as WakeupSection;
        init => SetSection(AnalysisReports.Wakeups, value);
    }

    public SmpSection? Smp
    {
        get => SectionOf(AnalysisReports.Smp) as SmpSection;
        init => SetSection(AnalysisReports.Smp, value);
    }

    public WaitGraphSection? WaitGraph
    {
        get => SectionOf(AnalysisReports.WaitGraph) as WaitGraphSection;
        init => SetSection(AnalysisReports.WaitGraph, value);
    }

    /// <summary>
    /// Ranked findings, worst first (docs/metrics.md, "Findings"); empty: none above the floor; null: not run.
    /// </summary>
    public List<FindingSection>? Findings
    {
        get => SectionOf(AnalysisReports.Findings) as List<FindingSection>;
        set => SetSection(AnalysisReports.Findings, value);
    }
}

public sealed class RunSection
{
    public required string Workload { get; init; }
    public string? Scenario { get; init; }
    public required Dictionary<string, string> Parameters { get; init; }
    public List<string> Claims { get; init; } = [];
    public string? Command { get; init; }
    public int ExitCode { get; init; }
    public DateTimeOffset StartedUtc { get; init; }

    /// <summary>
    /// `trace -- PROGRAM`: wall time from the program's start to the end of its tree's last process
    /// (docs/metrics.md#program-usage); null for other runs, whose workload reports its own, and after an interruption.
    /// </summary>
    public long? ElapsedNs { get; init; }

    /// <summary>
    /// `trace -- PROGRAM`: getrusage of the program and every process of its tree (Linux), in the same form as a
    /// workload's own (workload.json `process`); else null.
    /// </summary>
    public ProcessTimes? Rusage { get; init; }
}

public sealed class CaptureSection
{
    public required string Backend { get; init; }
    public required string TraceFile { get; init; }
    public long Events { get; init; }
    public long SwitchEvents { get; init; }
    public long LostEvents { get; init; }
    public long[]? LostEventsPerCpu { get; init; }
    public long[]? PagesWithMissedEvents { get; init; }
    public long ChainBreaks { get; init; }
    public long ChainBreaksInRegion { get; init; }
    public int Cpus { get; init; }
    public long DurationNs { get; init; }
    public string? Clock { get; init; }
    public string? Kernel { get; init; }
    public bool Partial { get; init; }
    /// <summary>
    /// Where lost events are placed: "per-cpu" or "trace" (<see cref="LossFlags"/>); null when nothing was lost.
    /// </summary>
    public string? LossScope { get; set; }
    /// <summary>CPUs that lost events (per-cpu scope only).</summary>
    public int[]? LossCpus { get; set; }
    /// <summary>Report fields that lost events may have changed; null when nothing was lost.</summary>
    public IReadOnlyList<string>? LossAffectedMetrics { get; set; }
}

public sealed class RegionSection
{
    /// <summary>
    /// "markers" (the program's own begin/end markers), "target" (TraceLab's: program start to end, attach to detach)
    /// or "whole-trace".
    /// </summary>
    public required string Source { get; init; }
    public long BeginNs { get; init; }
    public long EndNs { get; init; }
    public long DurationNs => EndNs - BeginNs;
}

public sealed class ProcessSection
{
    public int Pid { get; init; }
    public string? Name { get; init; }
    /// <summary>
    /// The workload's own timep-style figures (monotonic clock, getrusage RUSAGE_SELF); null when unknown.
    /// </summary>
    public long? RealNs { get; init; }
    public long? UserNs { get; init; }
    public long? SystemNs { get; init; }
    /// <summary>The workload's getrusage(RUSAGE_SELF) nvcsw / nivcsw; null when unknown.</summary>
    public long? RusageVoluntarySwitches { get; init; }
    public long? RusageInvoluntarySwitches { get; init; }
    /// <summary>Sum of the traced run time of the process's threads over the region.</summary>
    public long TracedRunNs { get; init; }
    public long TracedReadyNs { get; init; }
    public long TracedWaitNs { get; init; }
    /// <summary>Sums of the threads' traced switch counts over the region.</summary>
    public long VoluntarySwitches { get; init; }
    public long InvoluntarySwitches { get; init; }
    /// <summary>
    /// The workload's own result figures (workload.json `metrics`, e.g. throttle's sum check); null when it reports
    /// none.
    /// </summary>
    public Dictionary<string, double>? WorkloadMetrics { get; init; }
}

public sealed class ThreadSection
{
    /// <summary>
    /// TraceLab's thread id: the kernel's tid, or for a later thread that reused an exited thread's tid an id
    /// that says both (<see cref="Core.ThreadIds"/>); <see cref="KernelTid"/> and <see cref="Instance"/> then say
    /// which.
    /// </summary>
    public int Tid { get; init; }
    /// <summary>The kernel's tid, when more than one thread had it in the trace; null (omitted) otherwise.</summary>
    public int? KernelTid { get; init; }
    /// <summary>
    /// Which thread with that tid (1 = the first), when more than one had it; null (omitted) otherwise.
    /// </summary>
    public int? Instance { get; init; }
    /// <summary>Its fork and exit (trace clock, ns), when its tid was reused and they are in the trace.</summary>
    public long? StartNs { get; init; }
    public long? EndNs { get; init; }
    /// <summary>
    /// The process the thread belongs to (docs/metrics.md, "Processes"); kernel threads: 2 (kthreadd).
    /// </summary>
    public int Pid { get; init; }
    public required string Name { get; init; }
    public string? Role { get; init; }
    public long RunNs { get; init; }
    public long ReadyNs { get; init; }
    public long WaitNs { get; init; }
    public long VoluntarySwitches { get; init; }
    public long InvoluntarySwitches { get; init; }
    public long Migrations { get; init; }
    public long WakeupsReceived { get; init; }
    public long WakeupsGiven { get; init; }
    public long RepairedStarts { get; init; }
    public required LatencySection ReadyLatency { get; init; }
    public List<WakerSection> TopWakers { get; init; } = [];
    public WorkloadThreadSection? Workload { get; init; }
    /// <summary>
    /// True when lost events may have changed this row (<see cref="LossFlags"/>); null (omitted) otherwise.
    /// </summary>
    public bool? MayBeAffectedByLoss { get; set; }
    /// <summary>The CPUs with lost events this thread ran on (per-cpu scope only).</summary>
    public int[]? LossCpus { get; set; }
}

public sealed class LatencySection
{
    public long Count { get; init; }
    public long P50Ns { get; init; }
    public long P99Ns { get; init; }
    public long MaxNs { get; init; }

    public static LatencySection From(LatencyHistogram h) => new()
    {
        Count = h.Count,
        P50Ns = h.Percentile(50),
        P99Ns = h.Percentile(99),
        MaxNs = h.Max,
    };
}

public sealed class WakerSection
{
    /// <summary>-1 = interrupt context / idle (no thread).</summary>
    public int Tid { get; init; }
    public required string Name { get; init; }
    public long Count { get; init; }
}

public sealed class WorkloadThreadSection
{
    public long UserNs { get; init; }
    public long SystemNs { get; init; }
    public long VoluntarySwitches { get; init; }
    public long InvoluntarySwitches { get; init; }
    public long Iterations { get; init; }
}
