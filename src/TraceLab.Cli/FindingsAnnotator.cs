using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Core;
using TraceLab.Export;
using TraceLab.Reporting;

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
        var report = ReportBuilder.Build(reader.Info, reader.Threads, session, workload: null, pidOverride: pid);
        var slices = new List<ExportSlice>();
        var findings = report.Findings ?? [];
        for (var i = 0; i < findings.Count; i++)
        {
            var f = findings[i];
            foreach (var w in f.Windows)
            {
                var start = report.Region.BeginNs + w.StartOffsetNs;
                var end = Math.Min(report.Region.EndNs, start + w.LengthNs);
                var track = $"TraceLab finding #{i + 1}: {f.Kind}";
                slices.Add(new ExportSlice(track, start, end, $"{f.Kind} {f.Severity:P1}: {f.Title}"));
            }
        }
        return slices;
    }
}
