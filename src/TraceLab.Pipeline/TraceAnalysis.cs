using TraceLab.Analyzers;
using TraceLab.Analyzers.Parallel;
using TraceLab.Analyzers.Stacks;
using TraceLab.Analyzers.Timeline;
using TraceLab.Analyzers.Waits;
using TraceLab.Core;
using TraceLab.Formats.Journal;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.StackJoin;
using TraceLab.Formats.Symbols;
using TraceLab.Formats.TraceDat;
using TraceLab.Reporting;
using TraceLab.Reporting.Html;
using TraceLab.Reporting.Stacks;
using TraceLab.Workloads;

namespace TraceLab.Pipeline;

/// <summary>
/// The analysis pipeline as one call: open the trace, stream it through the analyses (and the lock stacks when it
/// recorded them), complete them, build the report model. `tracelab analyze`, `trace`, the sweeps and the tests all
/// come through here; rendering (report.md, report.html, charts, terminal) is the caller's.
/// </summary>
public static class TraceAnalysis
{
    public static AnalysisResult Run(AnalysisRequest request, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(request);
        RunReport report;
        TimelineData? timeline;
        EventJournal? journal = null;
        try
        {
            using (var reader = Open(request))
                report = Pass(reader, request, out timeline, out journal, journaled: true, cancellationToken);
            // A system report's timeline is where its first finding is worst, known only now: recorded in a second
            // pass (only the analyses the timeline draws from) unless the user chose the window.
            if (request.FocusTimeline && request.Timeline is { } asked && TimelineFocus.Window(report) is { } worst
                && worst != asked)
            {
                var replayed = journal;
                journal = null;
                var source = replayed is { CanReplay: true } ? "replay" : "trace";
                TimelineData? Record(CancellationToken unwanted)
                {
                    using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, unwanted);
                    using (replayed)
                    using (StageTimes.Begin(source == "replay" ? "timeline replay" : "timeline"))
                        return RecordTimeline(request, worst, replayed, stop.Token);
                }
                return new AnalysisResult(report, request.RecordTimelineBeside is { } beside
                    ? beside(Record)
                    : Task.FromResult(Record(CancellationToken.None)))
                {
                    SecondPass = source,
                };
            }
            return new AnalysisResult(report, timeline);
        }
        finally
        {
            journal?.Dispose();
        }
    }

    /// <summary>
    /// <see cref="Run(AnalysisRequest, CancellationToken)"/> on a trace the caller has open (an export, a reader
    /// built in memory): one pass, the timeline in <see cref="AnalysisRequest.Timeline"/>'s window (no second, focused
    /// pass: that would read the trace again). The caller keeps the reader.
    /// </summary>
    public static AnalysisResult Run(IKernelTraceReader reader, AnalysisRequest request,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(reader);
        ArgumentNullException.ThrowIfNull(request);
        var report = Pass(reader, request, out var timeline, out _, journaled: false, cancellationToken);
        return new AnalysisResult(report, timeline);
    }

    /// <summary>
    /// The report alone: <see cref="Run(AnalysisRequest, CancellationToken)"/> without a timeline, for callers that
    /// render nothing else.
    /// </summary>
    public static RunReport Analyze(string traceFile, WorkloadResult? workload = null, int? pid = null,
        AnalysisSelection? analyses = null, TraceReadOptions? read = null, int? analysisThreads = null,
        CancellationToken cancellationToken = default) =>
        Run(new AnalysisRequest(traceFile)
        {
            Workload = workload,
            Pid = pid,
            Analyses = analyses ?? AnalysisSelection.All,
            Read = read ?? TraceReadOptions.Default,
            AnalysisThreads = analysisThreads,
        }, cancellationToken).Report;

    private static IKernelTraceReader Open(AnalysisRequest request)
    {
        using (StageTimes.Begin("open"))
            return TraceFormats.All.Open(request.TraceFile, request.Read);
    }

    /// <param name="journal">The pass's journal, when it kept one (<see cref="StartJournal"/>); the caller's to
    /// dispose.</param>
    /// <param name="journaled">Whether a second pass may follow (false: no journal is kept).</param>
    private static RunReport Pass(IKernelTraceReader reader, AnalysisRequest request, out TimelineData? timeline,
        out EventJournal? journal, bool journaled, CancellationToken cancellationToken)
    {
        journal = null;
        // An observer reads the analyses' state as the events arrive, and the lock stacks ask the process lineage
        // (which the accounting keeps) which process each thread is in: the analyses run on the reading thread then.
        var hasStacks = reader is IStackTraceReader { HasStacks: true };
        var threads = request.Observer is not null || hasStacks
            ? 0
            : request.AnalysisThreads ?? AnalysisPlan.DefaultThreads;
        // The journal takes the events a batch at a time as they are handed to the analysis threads: the batches the
        // reading thread packed for that are kept as they are, not packed again (docs/performance.md#journal-batches).
        if (journaled && threads > 0) journal = StartJournal(reader, request);
        using var session = new AnalysisSession(request.Analyses,
            new AnalysisOptions(request.Timeline, reader.Info.MayHaveMarkers), threads, reader.Threads,
            recorder: journal);
        // Stacks are read only from traces that recorded them; the others keep their one sink and cost.
        var lineage = session.Accounting.Lineage;
        var stacks = hasStacks
            ? new LockStackAnalyzer(tid => lineage.ProcessOf(tid, reader.Threads),
                ((IStackTraceReader)reader).SwitchStacksAreOfNextThread)
            : null;
        var observer = request.Observer?.Attach(reader, session);
        using (StageTimes.Begin("pass"))
        {
            var sink = Sinks(session.Sink, stacks, observer);
            // The reading thread counts what it delivers, so that the journal places the reader's changes to its
            // thread table between the same events.
            if (journal is not null) sink = journal.CountedOnReadingThread(sink);
            // In front of the journal too: the second pass replays the same events, and writes and reads fewer.
            RedundantEvidenceFilter.Read(reader, sink,
                LeavesOutRedundantEvidence(request, session) && stacks is null && observer is null, cancellationToken);
            session.Complete();
            // After the hand-off has finished: the last batch has been given to the journal.
            journal?.Finish();
        }
        RunReport report;
        StackSymbolizer? symbolizer = null;
        using (StageTimes.Begin("report model"))
        {
            StacksSection? stacksSection = null;
            if (stacks is not null && reader is IStackTraceReader withStacks)
            {
                symbolizer = Symbolizer(withStacks, request.Demangle);
                stacksSection = StacksReportBuilder.Build(stacks, withStacks.Stacks, symbolizer,
                    (reader as StackJoinedReader)?.Summary, withStacks.StackNotes);
                ApplyWaitStackTags(session, withStacks, symbolizer, request.WaitTags);
                NameWakeChains(session, withStacks, symbolizer, request.WaitTags);
            }
            timeline = session.Timeline?.Result();
            report = ReportBuilder.Build(reader.Info, session.Names, session, request.Workload, request.Run,
                request.Partial, request.Pid, request.TopProcesses, request.ChartsReady, stacksSection,
                request.Notices, request.ExcludePids);
        }
        request.Observer?.Complete(new PassOutcome(reader, session, report, stacks, symbolizer));
        return report;
    }

    /// <summary>
    /// Reclassifies the waits whose blocking stack a tag names (docs/metrics.md#wait-stack-tags), before the report
    /// reads the classes. Only where a switch's stack is the blocking thread's own (perf, ftrace): ETW's is the
    /// incoming thread's, taken after its wait was classified.
    /// </summary>
    private static void ApplyWaitStackTags(AnalysisSession session, IStackTraceReader reader,
        StackSymbolizer symbolizer, WaitStackTags tags)
    {
        if (reader.SwitchStacksAreOfNextThread
            || session.AnalyzerOf(WaitClassAnalyzer.Analysis) is not WaitClassAnalyzer waits) return;
        // A stack is named once, however many threads and classes it was seen with.
        var named = new Dictionary<int, (WaitClass, string)?>();
        waits.ApplyStackTags(id =>
        {
            if (!named.TryGetValue(id, out var tagged))
            {
                named[id] = tagged = tags.ClassOf(symbolizer.Stack(reader.Stacks, id).Select(f => f.Symbol)) is { } t
                    ? (t.Class, t.Tag.Pattern)
                    : null;
            }
            return tagged;
        });
    }

    /// <summary>
    /// Names each wake-chain lock by the call site its waiters blocked at (docs/metrics.md#wake-chain-call-site),
    /// before the report reads the names. Only where a switch's stack is the blocking thread's own, as for the wait
    /// tags.
    /// </summary>
    private static void NameWakeChains(AnalysisSession session, IStackTraceReader reader, StackSymbolizer symbolizer,
        WaitStackTags tags)
    {
        if (reader.SwitchStacksAreOfNextThread || session.Convoys is not { } convoys) return;
        var named = new Dictionary<int, string?>();
        convoys.NameWakeChainsByCallSite(id =>
        {
            if (!named.TryGetValue(id, out var site))
                named[id] = site = WakeChainCallSite.Of(symbolizer.Stack(reader.Stacks, id), tags);
            return site;
        });
    }

    /// <summary>
    /// Whether a pass may leave out the unmodelled events that change nothing
    /// (<see cref="RedundantEvidenceFilter"/>): the analyses keep its contract and the request did not turn it off.
    /// The first pass also not with stacks or an observer, which see the events beside the analyses and are owed
    /// every one.
    /// </summary>
    private static bool LeavesOutRedundantEvidence(AnalysisRequest request, AnalysisSession session) =>
        request.LeaveOutRedundantEvidence && session.MayLeaveOutRedundantEvidence;

    /// <summary>The analyses' sink, then the stacks' and the observer's when there are any.</summary>
    private static IKernelEventSink Sinks(IKernelEventSink analyses, IKernelEventSink? stacks,
        IKernelEventSink? observer)
    {
        var sink = stacks is null ? analyses : new TeeSink(analyses, stacks);
        return observer is null ? sink : new TeeSink(sink, observer);
    }

    /// <summary>
    /// The first pass's journal, when a focused timeline may want a second pass (a system report: no process asked
    /// for; only known for certain once the report is built) and the analyses run beside the reading thread, which
    /// then has time to write it. At most the trace file's size: a journal never takes more disk than its trace.
    /// </summary>
    private static EventJournal? StartJournal(IKernelTraceReader reader, AnalysisRequest request)
    {
        if (!request.JournalForTimeline || !request.FocusTimeline || request.Timeline is null
            || request.Pid is not null || request.Workload is not null)
            return null;
        long size;
        try
        {
            size = new FileInfo(request.TraceFile).Length;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
        return EventJournal.Start(reader, size);
    }

    private static TimelineData? RecordTimeline(AnalysisRequest request, TimelineWindow window,
        EventJournal? journal, CancellationToken cancellationToken)
    {
        // The first pass's events replayed when it journaled them all, else the trace read again: the same events.
        using var reader = journal?.Replay() ?? TraceFormats.All.Open(request.TraceFile, request.Read);
        // The rest of the trace is read only while it can still change the recording (TimelineAnalyzer.IsFinal).
        // On the reading thread: its analyses are light, and handing the events to an analysis thread made this pass
        // slower, not faster (docs/performance.md#analysis-threads-16-cpus).
        using var final = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        // A replay's events are the analyses' own, the tids of reused threads already rewritten.
        using var session = new AnalysisSession(
            request.Analyses & (AnalysisSelection.Convoys | AnalysisSelection.Wakeups),
            new AnalysisOptions(window, reader.Info.MayHaveMarkers), analysisThreads: 0, reader.Threads,
            endWhenTimelineFinal: final, eventsHaveThreadIds: journal is { CanReplay: true });
        try
        {
            RedundantEvidenceFilter.Read(reader, session.Sink, LeavesOutRedundantEvidence(request, session),
                final.Token);
        }
        catch (OperationCanceledException) when (final.IsCancellationRequested
            && !cancellationToken.IsCancellationRequested)
        {
        }

        session.Complete();
        return session.Timeline?.Result();
    }

    /// <summary>
    /// The symbolizer of a trace's stacks: this machine's binaries and debug files; kernel symbols from the trace
    /// when it holds them (trace.dat), else from this machine when it runs the recorded kernel.
    /// </summary>
    /// <param name="reader">The trace's reader.</param>
    /// <param name="demangle">C++ names as perf script prints them (false: as linked).</param>
    public static StackSymbolizer Symbolizer(IStackTraceReader reader, bool demangle = true)
    {
        var running = SymbolOptions.RunningKernel(reader.Info.KernelRelease);
        var events = reader is StackJoinedReader joined ? joined.Events : reader;
        var kernel = events is TraceDatReader traceDat ? () => traceDat.RecordedKernelSymbols() ?? running() : running;
        var buildIds = reader switch
        {
            PerfDataReader perf => perf.RecordedBuildIds,
            StackJoinedReader { StackRecording: var perf } => perf.RecordedBuildIds,
            _ => null,
        };
        return new(reader.Maps, buildIds, new SymbolOptions
        {
            KernelSymbols = kernel,
            RecordedOnRunningKernel = SymbolOptions.IsRunningKernel(reader.Info.KernelRelease),
            Demangle = demangle,
        });
    }
}
