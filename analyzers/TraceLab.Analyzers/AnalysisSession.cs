using System.Runtime.CompilerServices;
using TraceLab.Analyzers.Kernel;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Parallel;
using TraceLab.Analyzers.Smp;
using TraceLab.Analyzers.Timeline;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Analyzers.Wakeups;
using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// The analyzers one run needs, wired into one <see cref="AnalysisPass"/> — or, with more than one analysis thread,
/// into several passes that each repeat the (deterministic) scheduler accounting and run a share of the analyzers on
/// their own thread, fed the same event stream by <see cref="EventFanOut"/>. Results are identical either way.
/// </summary>
public sealed class AnalysisSession : IKernelEventSink, IDisposable
{
    private readonly AnalysisPass[] _passes;
    /// <summary>What a reader feeds when the analysis runs on its thread: the pass, or the pass that ends when the
    /// timeline is final.</summary>
    private readonly IKernelEventSink? _singleSink;
    private readonly EventFanOut? _fanOut;
    /// <summary>Whether the tids of reused threads are rewritten here (false: the events come rewritten).</summary>
    private readonly bool _rewrites;
    private bool _completed;

    /// <param name="selection">
    /// The analyses to run, narrowed to <paramref name="catalog"/>'s; the timeline runs when, and only when,
    /// <paramref name="options"/> gives it a window.
    /// </param>
    /// <param name="options">What the run asks for beyond the selection (the timeline's window); null: nothing.</param>
    /// <param name="analysisThreads">
    /// Threads that run the analyzers besides the caller's (which reads the trace): 0 analyzes on the caller's thread
    /// as it reads. See <see cref="AnalysisPlan"/> for how analyzers are shared out.
    /// </param>
    /// <param name="names">
    /// The reader's thread names: a thread whose tid is later reused keeps the name it had (see
    /// <see cref="ThreadInstanceMap"/>); null: each thread of a reused tid takes the tid's last name.
    /// </param>
    /// <param name="catalog">The analyses there are (null: the built-ins, <see cref="Analyses.Catalog"/>).</param>
    /// <param name="endWhenTimelineFinal">
    /// For a pass that records only a timeline: cancelled once the recording is final
    /// (<see cref="UntilTimelineFinal"/>, asked on the thread that runs the timeline), so that the reader stops; null:
    /// the pass reads to the end. Given, the accounting keeps no ready-latency histograms
    /// (<see cref="ThreadAccounting.RecordsReadyLatency"/>): the pass exists for its timeline.
    /// </param>
    /// <param name="recorder">
    /// Gets every event the analyses see, as they see it (the tids of reused threads already rewritten,
    /// <see cref="ThreadIds"/>), a batch at a time as they are handed to the analysis threads, on the reading thread
    /// (<see cref="EventFanOut"/>): the first pass's event journal. Only with analysis threads.
    /// </param>
    /// <param name="eventsHaveThreadIds">
    /// The events come with the tids of reused threads already rewritten (a replay of what a
    /// <paramref name="recorder"/> saw): the session does not look for reused tids in them (it would find none: a
    /// later thread's id is never split again), as the passes on analysis threads do not.
    /// </param>
    public AnalysisSession(AnalysisSelection selection, AnalysisOptions? options = null, int analysisThreads = 0,
        ThreadTable? names = null, AnalysisCatalog? catalog = null,
        CancellationTokenSource? endWhenTimelineFinal = null, IEventBatchRecorder? recorder = null,
        bool eventsHaveThreadIds = false)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(analysisThreads);
        if (recorder is not null && analysisThreads == 0)
            throw new ArgumentException("a recorder needs an analysis thread", nameof(recorder));
        _rewrites = !eventsHaveThreadIds;
        _names = names;
        Catalog = catalog ?? Analyses.Catalog;
        Options = options ?? AnalysisOptions.Default;
        Instances = new ThreadInstanceMap(names);
        Names = names ?? new ThreadTable();
        Selection = Narrow(selection);
        var groups = AnalysisPlan.Partition(Catalog, Selection, Math.Max(1, analysisThreads));
        _passes = new AnalysisPass[groups.Count];
        for (var g = 0; g < groups.Count; g++)
            _passes[g] = Build(groups[g], analysisThreads == 0 && _rewrites ? Instances : null,
                recordsReadyLatency: endWhenTimelineFinal is null);
        Accounting = _passes[0].Accounting;
        IKernelEventSink[] consumers = [.. _passes];
        if (endWhenTimelineFinal is not null && Timeline is { } timeline)
        {
            var g = Array.FindIndex(_passes, p => p.Runs(timeline));
            consumers[g] = new UntilTimelineFinal(_passes[g], timeline, endWhenTimelineFinal,
                onReadingThread: analysisThreads == 0);
        }
        if (analysisThreads == 0) _singleSink = consumers[0];
        else _fanOut = new EventFanOut(consumers, recorder);
    }

    /// <summary>The analyses there are: what selections, analyzers and the plan refer to.</summary>
    public AnalysisCatalog Catalog { get; }

    /// <summary>
    /// Whether the events may reach <see cref="Sink"/> through a <see cref="RedundantEvidenceFilter"/>: true for the
    /// built-in analyses, which keep its contract (docs/architecture.md#unmodelled-events, and a test compares every
    /// result with and without it); false for another catalog, whose analyses are owed every event.
    /// </summary>
    public bool MayLeaveOutRedundantEvidence => ReferenceEquals(Catalog, Analyses.Catalog);

    public AnalysisOptions Options { get; }

    /// <summary>What runs: the selection asked for, within the catalog, the timeline only with a window.</summary>
    public AnalysisSelection Selection { get; }


    /// <summary>The scheduler accounting (of the first pass, when there are several: all compute the same).</summary>
    public ThreadAccounting Accounting { get; }

    /// <summary>
    /// The analyzer of a selected analysis; null when not selected or it has none.
    /// </summary>
    public IKernelAnalyzer? AnalyzerOf(AnalysisDefinition analysis) => _made.GetValueOrDefault(analysis);

    // Typed shortcuts for the built-in analyses (a new analysis needs none: AnalyzerOf serves it).
    public KernelTimeAnalyzer? Kernel => AnalyzerOf(Analyses.Kernel) as KernelTimeAnalyzer;
    public ConvoyAnalyzer? Convoys => AnalyzerOf(Analyses.Convoys) as ConvoyAnalyzer;
    public WakeupAnalyzer? Wakeups => AnalyzerOf(Analyses.Wakeups) as WakeupAnalyzer;
    public SmpAnalyzer? Smp => AnalyzerOf(Analyses.Smp) as SmpAnalyzer;
    public WaitForGraphAnalyzer? WaitGraph => AnalyzerOf(Analyses.WaitGraph) as WaitForGraphAnalyzer;
    public TimelineAnalyzer? Timeline => AnalyzerOf(Analyses.Timeline) as TimelineAnalyzer;

    /// <summary>Analysis threads in use (0: the caller's thread does everything).</summary>
    public int AnalysisThreads => _fanOut is null ? 0 : _passes.Length;

    /// <summary>
    /// Thread ids of the pass: a thread that reuses an exited thread's tid is a new thread (<see cref="ThreadIds"/>).
    /// </summary>
    public ThreadInstanceMap Instances { get; }

    private readonly ThreadTable? _names;

    /// <summary>
    /// The names to report with: the reader's, and once <see cref="Complete"/> has run, also those of each earlier
    /// thread of a reused tid (its own name and process, <see cref="ThreadInstanceMap.NameInstances"/>), in a table
    /// of the session's own. Never the reader's table written to. Empty when the session was given no names.
    /// </summary>
    public ThreadTable Names { get; private set; }

    /// <summary>
    /// Where a reader should deliver the events: the one pass itself when the analysis runs on the reader's thread
    /// (one call less per event than through <see cref="OnEvent"/>), else this session.
    /// </summary>
    public IKernelEventSink Sink => _singleSink ?? this;

    public void OnEvent(in KernelEvent e)
    {
        // One pass rewrites the tids itself (its accounting's fast path settles most events at no extra cost);
        // passes on analysis threads are fed events rewritten here, once.
        if (_singleSink is not null) _singleSink.OnEvent(e);
        else if (!_rewrites || !Instances.Needs(e)) _fanOut!.OnEvent(e);
        else FanOutRewritten(e);
    }

    /// <summary>
    /// The rare event that names an exited or reused tid, copied and rewritten. Out of line: the copy (a struct with a
    /// reference field) would otherwise be zeroed in <see cref="OnEvent"/>'s frame on every event.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void FanOutRewritten(in KernelEvent e)
    {
        var rewritten = e;
        Instances.Rewrite(ref rewritten);
        _fanOut!.OnEvent(rewritten);
    }

    /// <summary>
    /// After the last event: waits for the analysis threads (rethrowing their first error) and closes every analysis.
    /// </summary>
    public void Complete()
    {
        if (_completed) throw new InvalidOperationException("AnalysisSession.Complete: already completed");
        _completed = true;
        _fanOut?.Finish();
        foreach (var pass in _passes) pass.Complete();
        // The reader's table stays what the trace said: the instances' names go into a copy, made only when a tid
        // was reused (otherwise the reader's names are complete as they are).
        if (_names is not null && Instances.ReusedTids.Count > 0)
        {
            var names = _names.Copy();
            Instances.NameInstances(names);
            Names = names;
        }
    }

    /// <summary>
    /// Stops the analysis threads if <see cref="Complete"/> was not reached (reader error, cancellation).
    /// </summary>
    public void Dispose() => _fanOut?.Dispose();

    /// <summary>Every analyzer made, whichever pass it runs in.</summary>
    private readonly Dictionary<AnalysisDefinition, IKernelAnalyzer> _made = new();

    private AnalysisSelection Narrow(AnalysisSelection selection)
    {
        var narrowed = AnalysisSelection.None;
        foreach (var analysis in Catalog.All)
        {
            var selected = analysis.Requested is { } requested
                ? requested(Options)
                : Catalog.IsSelected(selection, analysis);
            if (selected) narrowed |= Catalog.Of(analysis);
        }
        return narrowed;
    }

    private AnalysisPass Build(AnalysisSelection plan, ThreadInstanceMap? instances, bool recordsReadyLatency)
    {
        var accounting = new ThreadAccounting { Names = _names, RecordsReadyLatency = recordsReadyLatency };
        var made = new Dictionary<AnalysisDefinition, IKernelAnalyzer>();
        var analyzers = new List<IKernelAnalyzer>();
        var context = new AnalysisContext(accounting, Options, made);
        // Catalog order: an analysis that observes others comes after them, so it finds them made.
        foreach (var analysis in Catalog.Selected(plan))
        {
            var analyzer = analysis.Create(context);
            made.Add(analysis, analyzer);
            _made.Add(analysis, analyzer);
            analyzers.Add(analyzer);
        }
        return new AnalysisPass(accounting, instances, [.. analyzers]);
    }
}
