using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Pipeline;
using TraceLab.Reporting.Charts;
using TraceLab.Workloads;

namespace TraceLab.Tests.Pipeline;

/// <summary>
/// The pipeline as a library call (<see cref="TraceAnalysis.Run(AnalysisRequest, CancellationToken)"/>): one request
/// in, the complete report model and what renderers draw beside it out, on the mutex sample.
/// </summary>
public sealed class TraceAnalysisTests
{
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex");

    private static AnalysisRequest Request() => new(Path.Combine(Sample, "trace.dat"))
    {
        Workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(Sample, "workload.json")), "workload.json"),
    };

    [Fact]
    public void The_result_holds_the_report_its_charts_the_timeline_and_the_findings_windows_in_trace_time()
    {
        ReportCharts? early = null;
        var result = TraceAnalysis.Run(Request() with
        {
            Timeline = TimelineWindow.Default,
            ChartsReady = charts => early = charts,
        });

        var report = result.Report;
        Assert.NotNull(result.Timeline);
        Assert.Same(report.Charts, result.Charts);
        Assert.Same(report.Charts, early);
        var findings = report.Findings!;
        Assert.NotEmpty(findings);
        // Every window of every finding, in order, moved from the region's begin to trace time.
        var expected = findings.SelectMany((f, i) => f.Windows.Select(w => (Rank: i + 1, f.Kind,
            Start: report.Region.BeginNs + w.StartOffsetNs,
            End: Math.Min(report.Region.EndNs, report.Region.BeginNs + w.StartOffsetNs + w.LengthNs)))).ToList();
        Assert.NotEmpty(expected);
        Assert.Equal(expected, result.FindingWindows.Select(w => (w.Rank, w.Finding.Kind, w.StartNs, w.EndNs)));
        Assert.All(result.FindingWindows, w => Assert.InRange(w.StartNs, report.Region.BeginNs, w.EndNs));
    }

    [Fact]
    public void Without_a_window_there_is_no_timeline_and_the_selection_reaches_the_report()
    {
        var result = TraceAnalysis.Run(Request() with { Analyses = AnalysisSelection.Threads | AnalysisSelection.Smp });
        Assert.Null(result.Timeline);
        Assert.Equal(["threads", "smp"], result.Report.Analyses);
        Assert.Null(result.Report.Convoys);
        Assert.NotNull(result.Report.Smp);
    }

    [Fact]
    public void An_observer_follows_the_same_pass_after_the_analyses_and_is_given_the_report_that_pass_built()
    {
        using var reader = TraceFormats.All.Open(Request().TraceFile, TraceReadOptions.Default);
        var observer = new Follower();
        // Threads asked for: an observer still gets the analyses on the reading thread, each event taken first.
        var result = TraceAnalysis.Run(reader, Request() with { Observer = observer, AnalysisThreads = 1 });

        Assert.True(observer.Events > 0);
        Assert.Equal(result.Report.Capture!.Events, observer.Events);
        Assert.Equal(0, observer.AnalysesBehind);
        Assert.Same(result.Report, observer.Outcome!.Report);
        Assert.Same(reader, observer.Outcome.Reader);
        Assert.Null(observer.Outcome.Stacks);
    }

    /// <summary>Counts the events it is fed and whether the accounting had taken each one before it.</summary>
    private sealed class Follower : IPassObserver, IKernelEventSink
    {
        private AnalysisSession? _session;

        public long Events { get; private set; }
        public long AnalysesBehind { get; private set; }
        public PassOutcome? Outcome { get; private set; }

        public IKernelEventSink Attach(IKernelTraceReader reader, AnalysisSession session)
        {
            _session = session;
            return this;
        }

        public void OnEvent(in KernelEvent e)
        {
            Events++;
            if (_session!.Accounting.LastTimestamp < e.Timestamp) AnalysesBehind++;
        }

        public void Complete(PassOutcome outcome) => Outcome = outcome;
    }
}
