using TraceLab.Analyzers.Timeline;
using TraceLab.Cli;
using TraceLab.Cli.Commands;
using TraceLab.Pipeline;
using TraceLab.Workloads;

namespace TraceLab.Tests.Cli;

/// <summary>
/// A system report's focused timeline is recorded in a second pass beside the terminal and the other report files
/// (<see cref="AnalysisRequest.RecordTimelineBeside"/>): report.html waits for that recording and draws what it
/// gave; a recording that fails fails the report as a timeline recorded before would have, replacing no file.
/// </summary>
public sealed class ReportFilesTimelineTests
{
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex");

    private static AnalysisResult Analyze() => TraceAnalysis.Run(new AnalysisRequest(Path.Combine(Sample, "trace.dat"))
    {
        Workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(Sample, "workload.json")), "workload.json"),
        Timeline = TimelineWindow.Default,
    });

    [Fact]
    public async Task Report_html_waits_for_a_timeline_still_being_recorded_and_draws_it()
    {
        var analysis = Analyze();
        using var dir = new TempDirectory("tracelab-late-timeline");
        var output = OutputDirectory.Prepare(dir.Path, "", force: true);
        var recording = new TaskCompletionSource<TimelineData?>(TaskCreationOptions.RunContinuationsAsynchronously);

        var writing = Task.Run(() => ReportFiles.Write(output, analysis.Report, recording.Task, charts: false));
        // Not done while the recording is not: report.html needs it.
        Assert.NotSame(writing, await Task.WhenAny(writing, Task.Delay(300)));
        recording.SetResult(analysis.Timeline);
        await writing.WaitAsync(TimeSpan.FromSeconds(60));

        var expected = TraceLab.Reporting.Html.HtmlReport.Render(analysis.Report, analysis.Timeline,
            chartsNote: "Charts were not drawn (--no-charts).");
        Assert.Equal(expected, File.ReadAllText(dir.File("report.html")));
        Assert.DoesNotContain("No timeline was recorded", expected, StringComparison.Ordinal);
    }

    [Fact]
    public void A_failed_recording_fails_the_report_and_the_earlier_files_stay()
    {
        var analysis = Analyze();
        using var dir = new TempDirectory("tracelab-failed-timeline");
        foreach (var name in ReportFiles.Names) File.WriteAllText(dir.File(name), $"earlier {name}");
        var output = OutputDirectory.Prepare(dir.Path, "", force: true);

        var failed = Task.FromException<TimelineData?>(new InvalidDataException("the trace changed under the pass"));
        var error = Assert.Throws<InvalidDataException>(() =>
            ReportFiles.Write(output, analysis.Report, failed, charts: false));

        Assert.Equal("the trace changed under the pass", error.Message);
        foreach (var name in ReportFiles.Names) Assert.Equal($"earlier {name}", File.ReadAllText(dir.File(name)));
        Assert.Empty(Directory.GetFiles(dir.Path, ".*"));
    }
}
