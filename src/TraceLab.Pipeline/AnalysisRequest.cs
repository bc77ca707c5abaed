using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Analyzers.Waits;
using TraceLab.Formats.Registry;
using TraceLab.Reporting;
using TraceLab.Reporting.Charts;
using TraceLab.Workloads;

namespace TraceLab.Pipeline;

/// <summary>
/// What to analyse and how: everything <see cref="TraceAnalysis.Run(AnalysisRequest, CancellationToken)"/> needs,
/// nothing it writes back.
/// </summary>
/// <param name="TraceFile">A trace in any format of <see cref="TraceFormats.All"/>.</param>
public sealed record AnalysisRequest(string TraceFile)
{
    /// <summary>The workload's own result when TraceLab ran it (its getrusage figures, iterations, pid).</summary>
    public WorkloadResult? Workload { get; init; }

    /// <summary>How the run was made (report.json "run"); null for a trace analysed on its own.</summary>
    public RunSection? Run { get; init; }

    /// <summary>The capture was stopped early (Ctrl+C): the report says so.</summary>
    public bool Partial { get; init; }

    /// <summary>The process to report on; null: the one the trace's markers name, else the whole system.</summary>
    public int? Pid { get; init; }

    /// <summary>The analyses to run (`--analysis`).</summary>
    public AnalysisSelection Analyses { get; init; } = AnalysisSelection.All;

    public TraceReadOptions Read { get; init; } = TraceReadOptions.Default;

    /// <summary>Record the thread timeline of this window (report.html); null: no timeline.</summary>
    public TimelineWindow? Timeline { get; init; }

    /// <summary>
    /// For a system report, record the timeline where the first finding is worst instead of <see cref="Timeline"/>
    /// (known only once the report is built: a second pass of the analyses the timeline draws from).
    /// </summary>
    public bool FocusTimeline { get; init; }

    /// <summary>
    /// Whether the focused timeline's second pass may replay the first pass's events from a temporary file
    /// (TraceLab.Formats.Journal.EventJournal, docs/performance.md#event-journal) rather than read the trace again;
    /// false: it reads the trace (what the tests compare the replay with).
    /// </summary>
    public bool JournalForTimeline { get; init; } = true;

    /// <summary>
    /// Whether the passes leave out the unmodelled events that can change no result
    /// (TraceLab.Analyzers.RedundantEvidenceFilter, docs/performance.md#redundant-evidence); false: every event
    /// reaches the analyses (what the tests compare with).
    /// </summary>
    public bool LeaveOutRedundantEvidence { get; init; } = true;

    /// <summary>
    /// Where the focused timeline's second pass runs: given the pass, starts it beside what the caller does next (the
    /// terminal, report.json, report.md and the charts need only the report) and returns its task, which becomes
    /// the result's <see cref="AnalysisResult.TimelineRecording"/>. Null: it runs before
    /// <see cref="TraceAnalysis.Run(AnalysisRequest, CancellationToken)"/> returns. The pass's token is cancelled
    /// when its result is no longer wanted.
    /// </summary>
    public Func<Func<CancellationToken, TimelineData?>, Task<TimelineData?>>? RecordTimelineBeside { get; init; }

    /// <summary>
    /// Threads for the analyzers besides the reading one (null:
    /// <see cref="Analyzers.Parallel.AnalysisPlan.DefaultThreads"/>).
    /// </summary>
    public int? AnalysisThreads { get; init; }

    /// <summary>Processes a system report details (`--top`).</summary>
    public int TopProcesses { get; init; } = SystemOverview.DefaultTop;

    /// <summary>Said first among the report's warnings (what the capture noticed).</summary>
    public IReadOnlyList<string>? Notices { get; init; }

    /// <summary>
    /// The stack tags that classify waits by their blocking stacks (docs/metrics.md#wait-stack-tags): the shipped ones,
    /// or those with a user's tag file first (`--wait-tags`).
    /// </summary>
    public WaitStackTags WaitTags { get; init; } = WaitStackTags.Default;

    /// <summary>
    /// C++ names in stacks demangled as perf script prints them (docs/formats.md#demangling); false keeps them as
    /// linked (`--no-demangle`, as perf script's).
    /// </summary>
    public bool Demangle { get; init; } = true;

    /// <summary>Processes the report leaves out, their cost said once (`--exclude-pid`); null: none named.</summary>
    public IReadOnlyList<int>? ExcludePids { get; init; }

    /// <summary>
    /// Given the charts' data as soon as it is built, before the report's sections (a caller can draw them
    /// meanwhile); the same data is the result's <see cref="AnalysisResult.Charts"/>.
    /// </summary>
    public Action<ReportCharts>? ChartsReady { get; init; }

    /// <summary>
    /// Follows the same pass (an export writing the events as they are read); null: none. With one, the analyses run
    /// on the reading thread, whatever <see cref="AnalysisThreads"/> says.
    /// </summary>
    public IPassObserver? Observer { get; init; }
}
