using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Kernel;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Smp;
using TraceLab.Analyzers.Timeline;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Analyzers.Waits;
using TraceLab.Analyzers.Wakeups;

namespace TraceLab.Analyzers;

/// <summary>
/// The built-in analyses and their catalog. A definition is a plain value; <see cref="Catalog"/> is the one list that
/// gives each its selection bit (its position), and TraceLab.Reporting's AnalysisReports.All lists their report
/// halves in the same order (docs/architecture.md, "Add an analysis").
/// </summary>
public static class Analyses
{
    public static readonly AnalysisDefinition Threads = new("threads", 0, c => new ThreadsAnalyzer(c.Accounting));
    public static readonly AnalysisDefinition Kernel = new("kernel", 14, c => new KernelTimeAnalyzer(c.Accounting));
    public static readonly AnalysisDefinition Convoys = new("convoys", 22, c => new ConvoyAnalyzer(c.Accounting));
    public static readonly AnalysisDefinition Wakeups = new("wakeups", 11, c => new WakeupAnalyzer(c.Accounting));
    public static readonly AnalysisDefinition Smp = new("smp", 12, c => new SmpAnalyzer(c.Accounting));
    public static readonly AnalysisDefinition WaitGraph =
        new("waitgraph", 18, c => new WaitForGraphAnalyzer(c.Accounting));

    /// <summary>
    /// The thread timeline of report.html: recorded when the run asks for a window (<see cref="AnalysisOptions"/>),
    /// never named by `--analysis`; it draws the convoy and wakeup analyzers' handoffs and wakeups when they run.
    /// </summary>
    public static readonly AnalysisDefinition Timeline = new("timeline", 10, TimelineAnalyzer.Create,
        observes: [Convoys, Wakeups], requested: o => o.Timeline is not null);

    /// <summary>Every built-in analysis: report order, then the timeline (which has no report.json section).</summary>
    public static readonly AnalysisCatalog Catalog = new(
    [
        Threads, Kernel, Convoys, WaitClassAnalyzer.Analysis, Wakeups, Smp, WaitGraph, FindingEvidenceAnalyzer.Analysis,
        Timeline,
    ]);
}
