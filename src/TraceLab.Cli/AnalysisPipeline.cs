using TraceLab.Analyzers;
using TraceLab.Analyzers.Parallel;
using TraceLab.Analyzers.Stacks;
using TraceLab.Analyzers.Timeline;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.Symbols;
using TraceLab.Reporting;
using TraceLab.Reporting.Charts;
using TraceLab.Reporting.Html;
using TraceLab.Reporting.Stacks;
using TraceLab.Workloads;

namespace TraceLab.Cli;

/// <summary>One streaming pass over a trace through the analyzers, then the report model.</summary>
public static class AnalysisPipeline
{
    public static RunReport Analyze(string traceFile, WorkloadResult? workload, RunSection? run, bool partial, int? pid,
        AnalysisSelection? analyses = null, TraceReadOptions? read = null, int? analysisThreads = null,
        CancellationToken cancellationToken = default) =>
        AnalyzeWithTimeline(
            traceFile, workload, run, partial, pid, analyses ?? AnalysisSelection.All, read, timeline: null,
            analysisThreads, cancellationToken: cancellationToken).Report;

    /// <summary>
    /// Also records the thread timeline of <paramref name="timeline"/> in the same pass (for report.html).
    /// </summary>
    /// <param name="notices">Said first among the report's warnings (what the capture noticed).</param>
    /// <param name="excludePids">Processes the report leaves out, their cost said once (`--exclude-pid`).</param>
    /// <param name="chartsBuilt">Given the charts' data before the report's sections are built
    /// (<see cref="ReportBuilder.Build"/>).</param>
    /// <param name="analysisThreads">Threads for the analyzers besides the reading one (null:
    /// <see cref="AnalysisPlan.DefaultThreads"/>).</param>
    public static (RunReport Report, TimelineData? Timeline) AnalyzeWithTimeline(
        string traceFile, WorkloadResult? workload,
        RunSection? run, bool partial, int? pid, AnalysisSelection analyses, TraceReadOptions? read,
            TimelineWindow? timeline,
        int? analysisThreads = null, int topProcesses = SystemOverview.DefaultTop,
        Action<ReportCharts>? chartsBuilt = null, bool focusTimeline = false,
        IReadOnlyList<string>? notices = null, IReadOnlyList<int>? excludePids = null,
        CancellationToken cancellationToken = default)
    {
        var opening = StageTimes.Begin("open");
        using var reader = TraceFiles.Open(traceFile, read ?? TraceReadOptions.Default);
        opening.Dispose();
        using var session = new AnalysisSession(analyses, new AnalysisOptions(timeline, reader.Info.MayHaveMarkers),
            analysisThreads ?? AnalysisPlan.DefaultThreads, reader.Threads);
        // Stacks are read only from traces that recorded them; the others keep their one sink and cost.
        var stacks = reader is IStackTraceReader { HasStacks: true }
            ? new LockStackAnalyzer(tid => reader.Threads.TryGetProcess(tid, out var process) ? process : tid)
            : null;
        using (StageTimes.Begin("pass"))
        {
            reader.Read(stacks is null ? session.Sink : new TeeSink(session.Sink, stacks), cancellationToken);
            session.Complete();
        }
        RunReport report;
        using (StageTimes.Begin("report model"))
        {
            var stacksSection = stacks is not null && reader is IStackTraceReader withStacks
                ? StacksReportBuilder.Build(stacks, withStacks.Stacks, Symbolizer(withStacks))
                : null;
            report = ReportBuilder.Build(reader.Info, reader.Threads, session, workload, run, partial, pid,
                topProcesses, chartsBuilt, stacksSection, notices, excludePids);
        }
        var recorded = session.Timeline?.Result();
        // A system report's timeline is where its first finding is worst, known only now: recorded in a second
        // pass (only the analyses the timeline draws from) unless the user chose the window.
        if (focusTimeline && timeline is { } asked && TimelineFocus.Window(report) is { } worst && worst != asked)
            using (StageTimes.Begin("timeline"))
                recorded = RecordTimeline(traceFile, read ?? TraceReadOptions.Default, analyses, worst,
                    cancellationToken);
        return (report, recorded);
    }

    private static TimelineData? RecordTimeline(string traceFile, TraceReadOptions read, AnalysisSelection analyses,
        TimelineWindow window, CancellationToken cancellationToken)
    {
        using var reader = TraceFiles.Open(traceFile, read);
        using var session = new AnalysisSession(analyses & (AnalysisSelection.Convoys | AnalysisSelection.Wakeups),
            new AnalysisOptions(window, reader.Info.MayHaveMarkers), analysisThreads: 0, reader.Threads);
        reader.Read(session.Sink, cancellationToken);
        session.Complete();
        return session.Timeline?.Result();
    }

    /// <summary>The symbolizer of a trace's stacks: this machine's binaries, debug files and kernel symbols.</summary>
    public static StackSymbolizer Symbolizer(IStackTraceReader reader) =>
        new(reader.Maps, (reader as PerfDataReader)?.RecordedBuildIds,
            new SymbolOptions { KernelSymbols = SymbolOptions.RunningKernel(reader.Info.KernelRelease) });

    /// <summary>Feeds every event to two sinks, in order.</summary>
    private sealed class TeeSink(IKernelEventSink first, IKernelEventSink second) : IKernelEventSink
    {
        public void OnEvent(in KernelEvent e)
        {
            first.OnEvent(in e);
            second.OnEvent(in e);
        }
    }
}
