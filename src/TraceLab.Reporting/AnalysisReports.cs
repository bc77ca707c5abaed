using TraceLab.Analyzers;
using TraceLab.Reporting.Findings;
using TraceLab.Reporting.Sections;

namespace TraceLab.Reporting;

/// <summary>
/// The one registration of every analysis, in report order: each entry pairs an analysis's report with its analyzer
/// half (<see cref="IAnalysisReport.Analysis"/>). `--analysis` names and help, ReportBuilder, report.json, report.md,
/// report.html and the terminal read this list; the analyzer halves are <see cref="Analyses.Catalog"/>, in the same
/// order (a test checks). Adding an analysis is its own files plus one line here and one in the catalog
/// (docs/architecture.md, "Add an analysis").
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

    /// <summary>
    /// The analyses there are (<see cref="Analyses.Catalog"/>): those listed here, in this order, and the timeline,
    /// which has no report.json section (AnalysisRegistrationTests checks that the two lists agree).
    /// </summary>
    public static AnalysisCatalog Catalog => Analyses.Catalog;

    /// <summary>"threads, kernel, …": the registered analyses' names, for help texts.</summary>
    public static string NameList => string.Join(", ", All.Select(a => a.Analysis.Name));

    /// <summary>Every selectable `--analysis` name, "all" last.</summary>
    public static IEnumerable<string> Names => All.Select(a => a.Analysis.Name).Append("all");

    /// <summary>Parses "threads,kernel,..."; throws <see cref="ArgumentException"/> naming the unknown entry.</summary>
    public static AnalysisSelection Parse(string text) => Catalog.Parse(text);

    /// <summary>The selected analyses' names, in report order (report.json "analyses").</summary>
    public static IEnumerable<string> Format(AnalysisSelection selection) =>
        All.Where(a => Catalog.IsSelected(selection, a.Analysis)).Select(a => a.Analysis.Name);
}
