using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Core;
using TraceLab.Export;
using TraceLab.Reporting;
using TraceLab.Reporting.Findings;

namespace TraceLab.Cli;

/// <summary>
/// The findings' worst windows (docs/metrics.md, "Findings") as export slices: the report built from the export's
/// own pass, each window named after its finding ("#1 lock-convoy 34.9 %: …").
/// </summary>
public sealed class FindingsAnnotator : IExportAnnotator
{
    public AnalysisSelection Selection => AnalysisSelection.All;

    public IReadOnlyList<ExportSlice> Slices(IKernelTraceReader reader, AnalysisSession session, int? pid)
    {
        var report = ReportBuilder.Build(reader.Info, session.Names, session, workload: null, pidOverride: pid);
        return [.. FindingWindow.Of(report).Select(w => new ExportSlice($"TraceLab finding #{w.Rank}: {w.Finding.Kind}",
            w.StartNs, w.EndNs, $"{w.Finding.Kind} {w.Finding.Severity:P1}: {w.Finding.Title}"))];
    }
}
