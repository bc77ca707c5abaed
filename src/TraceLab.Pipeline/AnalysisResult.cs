using TraceLab.Analyzers.Timeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Charts;
using TraceLab.Reporting.Findings;

namespace TraceLab.Pipeline;

/// <summary>
/// What <see cref="TraceAnalysis.Run(AnalysisRequest, CancellationToken)"/> made: the report model, complete, and what
/// renderers draw beside it.
/// </summary>
/// <param name="Report">report.json's model, built complete (nothing is added to it afterwards).</param>
/// <param name="Timeline">The thread timeline for report.html, when one was asked for.</param>
public sealed record AnalysisResult(RunReport Report, TimelineData? Timeline)
{
    /// <summary>The charts' data (the same as the report's).</summary>
    public ReportCharts? Charts => Report.Charts;

    /// <summary>The findings' worst windows, in trace time (ns), finding by finding in report order.</summary>
    public IReadOnlyList<FindingWindow> FindingWindows { get; } = FindingWindow.Of(Report);
}
