using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Kernel;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Smp;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Analyzers.Wakeups;

namespace TraceLab.Analyzers;

/// <summary>
/// Every analysis TraceLab runs, in report order: `--analysis`, <see cref="Parallel.AnalysisPlan"/> and
/// <see cref="AnalysisSession"/> read this list (and TraceLab.Reporting's AnalysisReports, one entry per analysis,
/// reads the same definitions). Adding an analysis: docs/architecture.md, "Add an analysis".
/// </summary>
public static class Analyses
{
    public static readonly AnalysisDefinition Threads = new("threads", AnalysisKind.Threads, 0, null);
    public static readonly AnalysisDefinition Kernel =
        new("kernel", AnalysisKind.Kernel, 14, a => new KernelTimeAnalyzer(a));
    public static readonly AnalysisDefinition Convoys =
        new("convoys", AnalysisKind.Convoys, 22, a => new ConvoyAnalyzer(a));
    public static readonly AnalysisDefinition Wakeups =
        new("wakeups", AnalysisKind.Wakeups, 11, a => new WakeupAnalyzer(a));
    public static readonly AnalysisDefinition Smp =
        new("smp", AnalysisKind.Smp, 12, a => new SmpAnalyzer(a));
    public static readonly AnalysisDefinition WaitGraph =
        new("waitgraph", AnalysisKind.WaitGraph, 18, a => new WaitForGraphAnalyzer(a.Region, a.Slots));
    /// <summary>Last: its rules read every other section of the report (rendered first, before any table).</summary>
    public static readonly AnalysisDefinition Findings =
        new("findings", AnalysisKind.Findings, 12, a => new FindingEvidenceAnalyzer(a));

    /// <summary>The registrations, in report order.</summary>
    public static readonly IReadOnlyList<AnalysisDefinition> All = [Threads, Kernel, Convoys, Wakeups, Smp, WaitGraph, Findings];

    /// <summary>The selected analyses, in report order.</summary>
    public static IEnumerable<AnalysisDefinition> Selected(AnalysisKind kinds) => All.Where(a => (kinds & a.Kind) != 0);
}
