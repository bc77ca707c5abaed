using TraceLab.Analyzers;
using TraceLab.Reporting;
using TraceLab.Reporting.Findings;

namespace TraceLab.Export;

/// <summary>
/// The findings' worst windows (docs/metrics.md, "Findings") as export slices, each named after its finding
/// ("#1 lock-convoy 34.9 %: …"): the findings `tracelab analyze` reports for the same trace and process.
/// </summary>
public sealed class FindingsAnnotator : IExportAnnotator
{
    public AnalysisSelection Selection => AnalysisSelection.All;

    public IReadOnlyList<ExportSlice> Slices(RunReport report) =>
        [.. FindingWindow.Of(report).Select(w => new ExportSlice($"TraceLab finding #{w.Rank}: {w.Finding.Kind}",
            w.StartNs, w.EndNs, $"{w.Finding.Kind} {w.Finding.Severity:P1}: {w.Finding.Title}"))];
}
