using TraceLab.Analyzers.Kernel;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Smp;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Analyzers.Wakeups;

namespace TraceLab.Analyzers;

/// <summary>
/// The analyzer halves of the built-in analyses this project's own code names (the timeline draws convoys and
/// wakeups; sessions have typed shortcuts). They are not a registration: an analysis runs and is reported when
/// TraceLab.Reporting's AnalysisReports.All lists it, and a new one keeps its definition in its own file
/// (docs/architecture.md, "Add an analysis").
/// </summary>
public static class Analyses
{
    public static readonly AnalysisDefinition Threads = new("threads", 0, null);
    public static readonly AnalysisDefinition Kernel = new("kernel", 14, a => new KernelTimeAnalyzer(a));
    public static readonly AnalysisDefinition Convoys = new("convoys", 22, a => new ConvoyAnalyzer(a));
    public static readonly AnalysisDefinition Wakeups = new("wakeups", 11, a => new WakeupAnalyzer(a));
    public static readonly AnalysisDefinition Smp = new("smp", 12, a => new SmpAnalyzer(a));
    public static readonly AnalysisDefinition WaitGraph =
        new("waitgraph", 18, a => new WaitForGraphAnalyzer(a));

    // Explicit, so that the first use of any member (Defined too) makes the built-ins above: without it the runtime
    // may defer the fields until one of them is read.
    static Analyses()
    {
    }

    /// <summary>
    /// Every analysis defined so far in this process (the built-ins above first when this class is the first to
    /// make one); report order is AnalysisReports.All's, which defines every registered analysis.
    /// </summary>
    public static IReadOnlyList<AnalysisDefinition> Defined => AnalysisDefinition.All;

    /// <summary>The selected analyses among those defined, in the order they were defined.</summary>
    public static IEnumerable<AnalysisDefinition> Selected(AnalysisKind kinds) => Defined.Where(kinds.Includes);
}
