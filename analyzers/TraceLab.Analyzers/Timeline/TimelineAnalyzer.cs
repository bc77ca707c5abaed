using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Wakeups;
using TraceLab.Core;

namespace TraceLab.Analyzers.Timeline;

/// <summary>
/// Records, for one window of the trace (<see cref="TimelineWindow"/>), each thread's running / runnable / blocked
/// intervals, the wakeups between threads, and the convoy episodes, handoffs and futile wakeups the convoy and
/// wakeup analyzers report (via their observer hooks). Outside the window an event only updates one thread's state
/// (no allocation once the thread is known), so memory is bounded by the threads and by what the window holds, at
/// most <see cref="MaxItems"/> items per kind.
/// </summary>
public sealed class TimelineAnalyzer : IKernelAnalyzer, IConvoyObserver, IWakeupObserver
{
    /// <summary>
    /// Default cap per item kind: far above what a few ms hold, low enough that a wrong window cannot exhaust memory.
    /// </summary>
    public const int DefaultMaxItems = 200_000;

    private readonly ThreadAccounting _accounting;
    private readonly MeasuredRegion _region;
    private readonly TimelineWindow _window;
    private readonly bool _recordSegments;
    private readonly ThreadSlots _slots;
    private SlotTable<ThreadState> _threads = new(static (_, _) => new ThreadState());
    private readonly List<TimelineSegment> _segments = [];
    private readonly List<TimelineWake> _wakes = [];
    private readonly List<ConvoyEpisode> _episodes = [];
    private readonly List<Handoff> _handoffs = [];
    private readonly List<TimelineFutileWakeup> _futile = [];
    private bool _anchored;
    private long _anchor;
    private long _start = long.MaxValue;
    private long _end = long.MaxValue;
    private bool _truncated;
    private bool _hasConvoys;
    private bool _hasWakeups;
    private long _lastTimestamp;
    private readonly bool _markersPossible;

    /// <param name="recordSegments">False for consumers that have the scheduling events themselves (exports) and want
    /// only the analysis items.</param>
    /// <param name="accounting">Runs before this analyzer on every event: the region, and where a thread's switch-in
    /// was not logged, the repaired start of its run (so running time here agrees with the report's).</param>
    /// <param name="markersPossible">False when the trace cannot hold markers (<see cref="TraceInfo.MayHaveMarkers"/>):
    /// no region can begin, so the window anchored at the first event never moves.</param>
    public TimelineAnalyzer(ThreadAccounting accounting, TimelineWindow window, bool recordSegments = true,
        int maxItems = DefaultMaxItems, bool markersPossible = true)
    {
        _markersPossible = markersPossible;
        _accounting = accounting;
        _region = accounting.Region;
        _slots = accounting.Slots;
        _window = window;
        _recordSegments = recordSegments;
        MaxItems = maxItems;
    }

    public int MaxItems { get; }

    /// <summary>
    /// False: keep tracking every thread to the end of the trace (the tests' reference for the shortcut).
    /// </summary>
    internal bool StopAfterWindow { get; init; } = true;

    /// <summary>
    /// The pass went past a window that can no longer move: every thread's state was closed at the window's end (see
    /// <see cref="OnEvent"/>).
    /// </summary>
    internal bool StoppedAfterWindow { get; private set; }

    private sealed class ThreadState
    {
        public bool Known;
        public ThreadRunState State;
        public long Since;
        public int Cpu = -1;
        /// <summary>
        /// Runnable because a waking came before its sleeping switch-out (ThreadAccounting.IsWokenBeforeSwitchOut);
        /// a waking before its switch-in turns the open segment back into a blocked one.
        /// </summary>
        public bool WokenEarly;
    }

    /// <summary>
    /// The timeline analysis's analyzer (<see cref="Analyses.Timeline"/>): the run's window, drawing the handoffs and
    /// wakeups of the convoy and wakeup analyzers of its pass when they were selected.
    /// </summary>
    internal static IKernelAnalyzer Create(AnalysisContext context)
    {
        var window = context.Options.Timeline
            ?? throw new InvalidOperationException("the timeline is recorded only for a window (AnalysisOptions)");
        var timeline = new TimelineAnalyzer(context.Accounting, window,
            markersPossible: context.Options.MarkersPossible);
        timeline.Observe(context.AnalyzerOf(Analyses.Convoys) as ConvoyAnalyzer,
            context.AnalyzerOf(Analyses.Wakeups) as WakeupAnalyzer);
        return timeline;
    }

    /// <summary>
    /// Subscribes to the analyzers' findings (either may be null when that analysis is not selected).
    /// </summary>
    public void Observe(ConvoyAnalyzer? convoys, WakeupAnalyzer? wakeups)
    {
        if (convoys is not null) { convoys.AddObserver(this); _hasConvoys = true; }
        if (wakeups is not null) { wakeups.AddObserver(this); _hasWakeups = true; }
        _convoys = convoys;
        _wakeups = wakeups;
    }

    private ConvoyAnalyzer? _convoys;
    private WakeupAnalyzer? _wakeups;

    /// <summary>
    /// Nothing later in the trace can change the recording (its result is final now, at <paramref name="now"/>): the
    /// pass went past the window (<see cref="StoppedAfterWindow"/>) and every handoff, episode and futile wakeup the
    /// observed analyzers have not reported yet would begin after the window. A pass recording only the timeline
    /// may stop reading then.
    /// </summary>
    public bool IsFinal(long now) =>
        StoppedAfterWindow && (_convoys?.EarliestUnreported(now, _end) ?? long.MaxValue) > _end
        && (_wakeups?.EarliestUnreported(now) ?? long.MaxValue) > _end;

    public void OnEvent(in KernelEvent e)
    {
        var t = e.Timestamp;
        _lastTimestamp = t;
        if (StoppedAfterWindow) return;
        if (!_anchored) Anchor(t);
        // Past a window that can no longer move (anchored at the region's begin, or at the first event of a trace that
        // cannot hold markers, so no region can begin) and that the region does not end inside: nothing later falls in
        // it. Every state open now would be closed later at a time past the window, so its segment ends at the window's
        // end either way; closing them here spares the rest of the trace (most of it) the per-event state tracking.
        // (Convoy and wakeup items still arrive through the observer hooks.)
        if (t > _end && StopAfterWindow && (_region.HasBegin || !_markersPossible)
            && (!_region.HasEnd || _region.End >= _end))
        {
            foreach (var (tid, s) in _threads.InOrder)
            {
                if (!s.Known) continue;
                Close(tid, s, t);
                s.Known = false;
            }
            StoppedAfterWindow = true;
            return;
        }
        // Any other event logged by a thread in thread context shows it running, even if its switch-in was lost.
        if (e.Kind != KernelEventKind.Switch && e.CurrentTid > 0 && !EventFlags.InInterrupt(e.Flags))
            Evidence(e.CurrentTid, t, e.Cpu);
        switch (e.Kind)
        {
            case KernelEventKind.Switch:
                if (e.PrevTid > 0 && (e.PrevState & (TaskState.ExitDead | TaskState.ExitZombie)) != 0)
                    Gone(e.PrevTid, t); // it exited: no more row time
                else if (e.PrevTid > 0)
                {
                    var slot = _slots.SlotOf(e.PrevTid);
                    var wokenEarly = !TaskState.IsPreempted(e.PrevState) && _accounting.IsWokenBeforeSwitchOut(slot);
                    Enter(e.PrevTid,
                        TaskState.IsPreempted(e.PrevState) || wokenEarly ? ThreadRunState.Runnable
                            : ThreadRunState.Blocked, t, -1);
                    State(e.PrevTid).WokenEarly = wokenEarly;
                }
                if (e.NextTid > 0) Enter(e.NextTid, ThreadRunState.Running, t, e.Cpu);
                break;
            case KernelEventKind.Waking or KernelEventKind.WakeupNew:
                {
                    var woken = e.WokenTid;
                    if (woken <= 0) break;
                    var s = State(woken);
                    // A second waking: the first found it still running, and it has been blocked since its switch-out.
                    if (s.WokenEarly) s.State = ThreadRunState.Blocked;
                    // already running or runnable: nothing changes
                    if (s.Known && s.State != ThreadRunState.Blocked) break;
                    Enter(woken, ThreadRunState.Runnable, t, -1);
                    if (InWindow(t) && Room(_wakes))
                        _wakes.Add(new TimelineWake(
                            t, e.CurrentTid > 0 && !EventFlags.InInterrupt(e.Flags) ? e.CurrentTid
                                : 0, woken, e.TargetCpu));
                    break;
                }
            case KernelEventKind.Exit:
                if (e.ExitingTid > 0) Gone(e.ExitingTid, t);
                break;
        }
    }

    private void Gone(int tid, long t)
    {
        if (_threads.Find(_slots.SlotOf(tid)) is not { Known: true } x) return;
        Close(tid, x, t);
        x.Known = false;
    }

    private void Evidence(int tid, long t, int cpu)
    {
        var s = State(tid);
        if (s.Known && s.State == ThreadRunState.Running) return;
        // The repaired start counts only if it follows the thread's last known state change (after an exit, or past
        // the region's end, the accounting's value can be stale).
        var since = s.Known && _accounting.TryGetRunningSince(tid, out var repaired) && repaired <= t
            && repaired >= s.Since ? repaired : t;
        Enter(tid, ThreadRunState.Running, since, cpu);
    }

    private void Anchor(long t)
    {
        _anchored = true;
        _anchor = t;
        _start = Saturate(t, _window.StartOffsetNs);
        _end = Saturate(_start, _window.LengthNs);
    }

    private static long Saturate(long a, long b) => b > 0 && a > long.MaxValue - b ? long.MaxValue : a + b;

    private bool InWindow(long t) => t >= _start && t <= _end;

    private bool Room<T>(List<T> list)
    {
        if (list.Count < MaxItems) return true;
        _truncated = true;
        return false;
    }

    private ThreadState State(int tid) => _threads.At(_slots.SlotOf(tid), tid);

    private void Enter(int tid, ThreadRunState state, long t, int cpu)
    {
        var s = State(tid);
        if (s.Known) Close(tid, s, t);
        s.Known = true;
        s.WokenEarly = false;
        s.State = state;
        s.Since = t;
        s.Cpu = cpu;
    }

    /// <summary>
    /// Ends the thread's current state at <paramref name="t"/>, recording the part inside the window.
    /// </summary>
    private void Close(int tid, ThreadState s, long t)
    {
        if (!_recordSegments) return;
        var lo = Math.Max(s.Since, _start);
        var hi = Math.Min(t, _end);
        if (hi > lo && Room(_segments))
            _segments.Add(new TimelineSegment(tid, s.State, lo, hi, s.State == ThreadRunState.Running ? s.Cpu : -1));
    }

    public void OnHandoff(in Handoff handoff, bool inRegion)
    {
        if (inRegion && (InWindow(handoff.WokenAt) || InWindow(handoff.RunningAt)) && Room(_handoffs))
            _handoffs.Add(handoff);
    }

    public void OnEpisode(in ConvoyEpisode episode)
    {
        if (episode.End >= _start && episode.Start <= _end && Room(_episodes)) _episodes.Add(episode);
    }

    public void OnFutileWakeup(int tid, long wokenAt, long blockedAt)
    {
        if ((InWindow(wokenAt) || InWindow(blockedAt)) && Room(_futile))
            _futile.Add(new TimelineFutileWakeup(tid, wokenAt, blockedAt));
    }

    /// <summary>The window moves to the region's begin: what was recorded against the first event is dropped.</summary>
    public void OnRegionBegin()
    {
        _anchored = false;
        Anchor(_region.Begin);
        _segments.Clear();
        _wakes.Clear();
        _handoffs.Clear();
        _futile.Clear();
        _episodes.Clear();
        _truncated = false;
    }

    public void Complete(long end)
    {
        foreach (var (tid, s) in _threads.InOrder)
            if (s.Known) Close(tid, s, Math.Max(end, s.Since));
        if (_end > end) _end = Math.Max(end, _start);
    }

    /// <summary>The recording; call after <see cref="Complete"/>.</summary>
    public TimelineData Result() => new()
    {
        Window = _window,
        Anchor = _anchor,
        Start = _anchored ? _start : 0,
        End = _anchored ? Math.Min(_end, Math.Max(_lastTimestamp, _start)) : 0,
        Segments = _segments,
        Wakes = _wakes,
        Episodes = _episodes,
        Handoffs = _handoffs,
        FutileWakeups = _futile,
        Truncated = _truncated,
        HasConvoys = _hasConvoys,
        HasWakeups = _hasWakeups,
    };
}
