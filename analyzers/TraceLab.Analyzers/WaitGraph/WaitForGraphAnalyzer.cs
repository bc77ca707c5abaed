using TraceLab.Analyzers.Waits;
using TraceLab.Core;

namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// wPerf-style wait-for graph (Zhou et al., OSDI 2018) in the single streaming pass: every wait of a thread (blocking
/// switch-out → the wakeup that ends it) becomes weight on edges from that thread to whoever ended it, cascaded
/// through the waker's own overlapping waits. Memory: one <see cref="ThreadWaitState"/> (with its fixed history) per
/// thread that ever blocked, plus one entry per distinct edge. Definitions: docs/metrics.md#wait-for-graph.
/// </summary>
public sealed class WaitForGraphAnalyzer : IKernelAnalyzer
{
    private readonly MeasuredRegion _region;
    private readonly WaitForGraphOptions _options;
    private readonly WaitStateTable _threads;
    private readonly WaitEdgeTable _edges = new();
    private readonly CascadeAttributor _cascade;
    /// <summary>
    /// Per CPU, a thread (0: none) that logged an event there and has not blocked since, so it has no open wait: the
    /// wait lookup for the logging thread of each event is skipped while it stays the same. Cleared for a thread
    /// when it blocks.
    /// </summary>
    private int[] _closedOnCpu = new int[8];
    private WaitForGraph? _result;
    private readonly Dictionary<int, long> _openAtEndNs = new();
    private readonly ThreadSlots _slots;
    /// <summary>The pass's accounting, which decides whether a sleep was woken before its switch-out.</summary>
    private readonly ThreadAccounting? _accounting;

    /// <summary>The graph of a pass, over its accounting (it runs before this analyzer on every event).</summary>
    public WaitForGraphAnalyzer(ThreadAccounting accounting, WaitForGraphOptions? options = null)
        : this(accounting.Region, accounting.Slots, options) => _accounting = accounting;

    public WaitForGraphAnalyzer(MeasuredRegion region, WaitForGraphOptions? options = null)
        : this(region, new ThreadSlots(), options)
    {
    }

    /// <param name="slots">tid → slot map shared with the rest of the pass
    /// (<see cref="ThreadAccounting.Slots"/>).</param>
    public WaitForGraphAnalyzer(MeasuredRegion region, ThreadSlots slots, WaitForGraphOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(slots);
        _slots = slots;
        _region = region;
        _options = options ?? new WaitForGraphOptions();
        _options.Validate();
        _threads = new WaitStateTable(slots, _options.HistoryCapacity);
        _cascade = new CascadeAttributor(_threads, _options.MaxCascadeDepth);
    }

    public WaitForGraph Result =>
        _result ?? throw new InvalidOperationException("The wait-for graph is built by Complete().");

    public void OnEvent(in KernelEvent e)
    {
        var t = e.Timestamp;
        // Whoever logged the event is running, so a wait it still has open ended without a wakeup we saw. Most events
        // come from the thread that logged the previous one on that CPU, whose wait is already known closed.
        var pid = e.CurrentTid;
        if (pid > 0)
        {
            var cpu = e.Cpu;
            var closed = _closedOnCpu;
            if ((uint)cpu >= (uint)closed.Length || closed[cpu] != pid) EndWaitOf(pid, cpu, t);
        }

        switch (e.Kind)
        {
            case KernelEventKind.Switch:
                OnSwitch(e, t);
                break;
            case KernelEventKind.Waking:
                if (e.WokenTid <= 0) break;
                if (_threads.Find(e.WokenTid) is { Waiting: true } woken)
                {
                    woken.WokenEarly = false;
                    EndWait(
                        e.WokenTid, woken, t, WakeCause.Of(e, woken.Reason, woken.BlockCall, woken.Uninterruptible));
                }
                else if (_accounting is not null)
                {
                    // Still on its CPU: this may be the waking of the wait it is about to switch out for.
                    var s = StateOf(e.WokenTid);
                    s.HasEarly = true;
                    s.EarlyCulprit = WakeCause.Of(e, -1, s.Call, uninterruptible: false);
                }
                break;
            case KernelEventKind.SyscallEnter:
                // The open syscall tells what an interrupt that ends the thread's next wait was.
                if (pid > 0 && e.HasSyscallNumber && !EventFlags.InInterrupt(e.Flags))
                    StateOf(pid).Call = WaitCalls.Of(e.SyscallNumber, e.SyscallArg1);
                break;
            case KernelEventKind.SyscallExit:
                if (pid > 0 && !EventFlags.InInterrupt(e.Flags) && _threads.Find(pid) is { } x) x.Call = WaitCall.None;
                break;
        }
    }

    /// <summary>
    /// Ends <paramref name="pid"/>'s open wait, if any, and remembers it as running on <paramref name="cpu"/>.
    /// </summary>
    private void EndWaitOf(int pid, int cpu, long t)
    {
        if (_threads.Find(pid) is { Waiting: true } s) BackOnCpu(pid, s, t);
        if (cpu < 0) return;
        if (cpu >= _closedOnCpu.Length) Array.Resize(ref _closedOnCpu, Math.Max(cpu + 1, _closedOnCpu.Length * 2));
        _closedOnCpu[cpu] = pid;
    }

    private void OnSwitch(in KernelEvent e, long t)
    {
        var prev = e.PrevTid;
        if (prev > 0)
        {
            var preempted = TaskState.IsPreempted(e.PrevState);
            var dead = (e.PrevState & (TaskState.ExitDead | TaskState.ExitZombie)) != 0 && !preempted;
            if (!preempted && !dead)
            {
                var s = StateOf(prev);
                s.Waiting = true;
                s.Since = t;
                s.Reason = e.PrevWaitReason;
                s.BlockCall = s.Call;
                s.Uninterruptible = (e.PrevState & TaskState.Uninterruptible) != 0;
                s.WokenEarly = s.HasEarly && _accounting!.IsWokenBeforeSwitchOut(_slots.SlotOf(prev));
                s.HasEarly = false;
                // Its wait is open again wherever it was last seen running (usually this CPU only).
                var closed = _closedOnCpu;
                for (var i = 0; i < closed.Length; i++)
                    if (closed[i] == prev) closed[i] = 0;
            }
        }
        var nextTid = e.NextTid;
        if (nextTid > 0)
        {
            if (_threads.Find(nextTid) is { } next)
            {
                if (next.Waiting) BackOnCpu(nextTid, next, t);
                next.HasEarly = false;
            }
            // It runs here now with no open wait: its own events on this CPU need no lookup.
            var closed = _closedOnCpu;
            var cpu = e.Cpu;
            if ((uint)cpu < (uint)closed.Length) closed[cpu] = nextTid;
        }
    }

    private ThreadWaitState StateOf(int tid) => _threads.GetOrAdd(tid);

    /// <summary>
    /// Running again with no waking since its switch-out: one logged while it still ran ended the wait at its start
    /// (0 ns, its waker the culprit); without one, the wait lasted until now and what ended it is unknown.
    /// </summary>
    private void BackOnCpu(int tid, ThreadWaitState s, long t)
    {
        if (s.WokenEarly) EndWait(tid, s, s.Since, s.EarlyCulprit);
        else EndWait(tid, s, t, WaitVertex.Unknown);
        s.WokenEarly = false;
    }

    private void EndWait(int tid, ThreadWaitState s, long t, int culprit)
    {
        s.Waiting = false;
        var culpritSlot = _threads.SlotOfVertex(culprit);
        Attribute(tid, s.Since, t, culprit, culpritSlot);
        s.History.Add(new WaitRecord(s.Since, t, culprit, culpritSlot));
    }

    private void Attribute(int tid, long start, long end, int culprit, int culpritSlot)
    {
        // Cascade over the in-region part only; histories keep the unclipped waits, which may begin before the region.
        var lo = Math.Max(start, _region.Begin);
        var hi = Math.Min(end, _region.End);
        if (hi > lo) _cascade.Attribute(tid, lo, hi, culprit, culpritSlot, _edges);
    }

    public void OnRegionBegin()
    {
        _edges.Clear();
        _cascade.TruncatedLookups = 0;
    }

    public void Complete(long end)
    {
        foreach (var (tid, s) in _threads.InOrder)
        {
            if (!s.Waiting) continue;
            // Woken before its switch-out: runnable, not waiting (ThreadAccounting counts ready time).
            if (s.WokenEarly)
            {
                BackOnCpu(tid, s, end);
                continue;
            }
            // Still blocked: counted (as wait time, like ThreadAccounting) but its end is unknown.
            Attribute(tid, s.Since, end, WaitVertex.Unknown, -1);
            var open = _region.Overlap(s.Since, end);
            if (open > 0) _openAtEndNs[tid] = open;
            s.Waiting = false;
        }
        _result = new WaitForGraph(_edges.ToList(), _options.KnotMinEdgeShare, _cascade.TruncatedLookups)
        {
            OpenAtEndNs = _openAtEndNs,
        };
    }
}
