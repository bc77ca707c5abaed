namespace TraceLab.Analyzers;

/// <summary>
/// One analysis, described once (see <see cref="Analyses.All"/>): what `--analysis` calls it, the flag that selects
/// it, what it costs per event (a hint for <see cref="Parallel.AnalysisPlan"/>), and how its analyzer is made.
/// </summary>
/// <param name="Name">Its `--analysis` name, also its entry in report.json's "analyses".</param>
/// <param name="Kind">The selection flag.</param>
/// <param name="CostHint">
/// Relative per-event cost, ns/event on the `timemutex mutex` capture with lock syscalls (docs/performance.md):
/// how <see cref="Parallel.AnalysisPlan"/> balances analysis threads, never something results depend on.
/// </param>
/// <param name="Create">
/// Makes its analyzer over a pass's accounting; null when the analysis only reads the accounting (threads).
/// </param>
public sealed record AnalysisDefinition(
    string Name, AnalysisKind Kind, double CostHint, Func<ThreadAccounting, IKernelAnalyzer>? Create);
