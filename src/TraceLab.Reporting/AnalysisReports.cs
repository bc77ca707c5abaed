using TraceLab.Analyzers;
using TraceLab.Reporting.Findings;
using TraceLab.Reporting.Sections;

namespace TraceLab.Reporting;

/// <summary>
/// The one registration of every analysis, in report order: each entry pairs an analysis's report with its analyzer
/// half (<see cref="IAnalysisReport.Analysis"/>). `--analysis` names and help, the session (through
/// <see cref="Select"/>), ReportBuilder, report.json, report.md, report.html and the terminal read this list, so
/// adding an analysis is its own files plus one line here (docs/architecture.md, "Add an analysis").
/// </summary>
public static class AnalysisReports
{
    public static readonly IReadOnlyList<IAnalysisReport> All =
    [
        new ThreadsReport(),
        new KernelReport(),
        new ConvoyReport(),
        new Waits.WaitsReport(),
        new WakeupReport(),
        new SmpReport(),
        new WaitGraphReport(),
        new FindingsReport(), // last: its rules read every other section
    ];

    // Typed shortcuts for the built-in analyses (a new analysis needs none: Of<T> serves it).
    public static ThreadsReport Threads { get; } = Of<ThreadsReport>();
    public static KernelReport Kernel { get; } = Of<KernelReport>();
    public static ConvoyReport Convoys { get; } = Of<ConvoyReport>();
    public static WakeupReport Wakeups { get; } = Of<WakeupReport>();
    public static SmpReport Smp { get; } = Of<SmpReport>();
    public static WaitGraphReport WaitGraph { get; } = Of<WaitGraphReport>();
    public static FindingsReport Findings { get; } = Of<FindingsReport>();

    /// <summary>The registered report of type <typeparamref name="T"/>.</summary>
    public static T Of<T>() where T : IAnalysisReport => All.OfType<T>().Single();

    /// <summary>"threads, kernel, …": the registered analyses' names, for help texts.</summary>
    public static string NameList => string.Join(", ", All.Select(a => a.Analysis.Name));

    /// <summary>Every selectable `--analysis` name, "all" last.</summary>
    public static IEnumerable<string> Names => All.Select(a => a.Analysis.Name).Append("all");

    /// <summary>
    /// The selection a session runs: <paramref name="kinds"/> narrowed to the registered analyses (so "all" means
    /// every analysis listed here, whether or not anything else has made its definition yet).
    /// </summary>
    public static AnalysisKind Select(AnalysisKind kinds) =>
        All.Where(a => kinds.Includes(a.Analysis)).Aggregate(AnalysisKind.None, (k, a) => k | a.Analysis.Kind);

    /// <summary>Parses "threads,kernel,..."; throws <see cref="ArgumentException"/> naming the unknown entry.</summary>
    public static AnalysisKind Parse(string text) => AnalysisKinds.Parse(text, All.Select(a => a.Analysis));

    /// <summary>The selected analyses' names, in report order (report.json "analyses").</summary>
    public static IEnumerable<string> Format(AnalysisKind kinds) =>
        All.Where(a => kinds.Includes(a.Analysis)).Select(a => a.Analysis.Name);
}
