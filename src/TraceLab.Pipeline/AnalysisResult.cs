using TraceLab.Analyzers.Timeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Charts;
using TraceLab.Reporting.Findings;

namespace TraceLab.Pipeline;

/// <summary>
/// What <see cref="TraceAnalysis.Run(AnalysisRequest, CancellationToken)"/> made: the report model, complete, and what
/// renderers draw beside it.
/// </summary>
public sealed class AnalysisResult
{
    /// <param name="report">report.json's model, built complete (nothing is added to it afterwards).</param>
    /// <param name="timelineRecording">The thread timeline for report.html (null data when none was asked for):
    /// finished, or still being recorded beside the caller (<see cref="AnalysisRequest.RecordTimelineBeside"/>).
    /// </param>
    public AnalysisResult(RunReport report, Task<TimelineData?> timelineRecording)
    {
        Report = report;
        TimelineRecording = timelineRecording;
        FindingWindows = FindingWindow.Of(report);
    }

    public AnalysisResult(RunReport report, TimelineData? timeline) : this(report, Task.FromResult(timeline))
    {
    }

    public RunReport Report { get; }

    /// <summary>
    /// How the focused timeline's second pass reads its events: "replay" (the first pass's journal), "trace" (the
    /// trace again), or null when there is no second pass.
    /// </summary>
    public string? SecondPass { get; init; }

    /// <summary>The thread timeline's recording (see the constructor).</summary>
    public Task<TimelineData?> TimelineRecording { get; }

    /// <summary>The thread timeline for report.html, when one was asked for (waits for its recording).</summary>
    public TimelineData? Timeline => TimelineRecording.GetAwaiter().GetResult();

    /// <summary>The charts' data (the same as the report's).</summary>
    public ReportCharts? Charts => Report.Charts;

    /// <summary>The findings' worst windows, in trace time (ns), finding by finding in report order.</summary>
    public IReadOnlyList<FindingWindow> FindingWindows { get; }

    /// <summary>The report and the timeline (waiting for its recording).</summary>
    public void Deconstruct(out RunReport report, out TimelineData? timeline)
    {
        report = Report;
        timeline = Timeline;
    }
}
