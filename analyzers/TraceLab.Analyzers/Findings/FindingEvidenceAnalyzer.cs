using TraceLab.Analyzers.Locks;
using TraceLab.Core;
using TraceLab.Core.Syscalls;

namespace TraceLab.Analyzers.Findings;

/// <summary>
/// Collects, in the single pass, the per-event evidence the findings rules need and no other analysis keeps
/// (docs/metrics.md, "Findings"): lock holders descheduled (yield or sleep) while a waiter queues, wakeups that
/// send the woken thread straight into a wait on a lock its waker holds, runnable time after preemption (and by a
/// higher-priority task), time blocked per lock object, and where in time each of these was worst. Memory is bounded
/// by threads, lock objects and a fixed number of time buckets.
/// </summary>
/// <remarks>
/// Per-kind (<see cref="IPerKindAnalyzer"/>): the pass calls it only for the kinds it follows, with the slots the
/// accounting resolved, so no event costs it a thread lookup of its own (the default analysis runs it on every trace).
/// The lock operations (their object, whether they blocked, were woken) are the pass's
/// <see cref="LockOperationTracker"/>'s: this analyzer reads them and subscribes to their blocks and exits.
/// </remarks>
public sealed class FindingEvidenceAnalyzer : IPerKindAnalyzer, ILockOperationObserver
{
    /// <summary>
    /// The "findings" analysis (docs/metrics.md, "Findings"): this collector in the pass, the rules over the report
    /// after it (TraceLab.Reporting's FindingsReport).
    /// </summary>
    public static readonly AnalysisDefinition Analysis =
        new("findings", 12, c => new FindingEvidenceAnalyzer(c.Accounting));

    private const long None = FindingThread.None;

    private readonly ThreadAccounting _accounting;
    private readonly MeasuredRegion _region;
    private readonly WindowClock _clock = new();
    private readonly WindowSeries _holding;
    private readonly WindowSeries _wakeWhileHolding;
    private readonly WindowSeries _higherPriority;
    private readonly DescheduledHolders _descheduledHolders;
    private SlotTable<FindingThread> _threads;
    private readonly Dictionary<LockObject, FindingObject> _objects = [];

    public FindingEvidenceAnalyzer(ThreadAccounting accounting)
    {
        _accounting = accounting;
        _region = accounting.Region;
        _holding = _clock.NewSeries();
        _wakeWhileHolding = _clock.NewSeries();
        _higherPriority = _clock.NewSeries();
        _descheduledHolders = new DescheduledHolders(_region, _holding, _wakeWhileHolding);
        var operations = LockOperationTracker.Of(accounting);
        operations.Subscribe(this, LockTransitions.Blocked | LockTransitions.Exiting);
        _threads = new((tid, slot) => new FindingThread(tid, operations.At(slot, tid)));
    }

    /// <summary>
    /// The kinds without an entry point (the pass's rare kinds), and every event when run outside a pass. Of those,
    /// only wakeup-new is evidence here; every event starts the window clock.
    /// </summary>
    public void OnEvent(in KernelEvent e)
    {
        if (PerKindEntryPoints.Dispatch(this, e, _accounting.Slots) || !Accepts(e)) return;
        if (e.Kind == KernelEventKind.WakeupNew && e.WokenTid > 0) State(e.WokenTid).CreatedAt = e.Timestamp;
    }

    // Per-kind entry points. Thread evidence (other, exec and marker events) is wanted only so that the first event
    // of the trace, whatever its kind, starts the window clock.

    public PerKindEvents Wants => PerKindEvents.SyscallsAndScheduling | PerKindEvents.ThreadEvidence;

    public void OnSyscallEnter(in KernelEvent e, in EventSlots slots)
    {
        if (Accepts(e) && e.CurrentTid > 0) OnSyscallEnter(e, State(slots.Pid, e.CurrentTid));
    }

    public void OnSyscallExit(in KernelEvent e, in EventSlots slots)
    {
        if (Accepts(e) && e.CurrentTid > 0) OnSyscallExit(e, State(slots.Pid, e.CurrentTid));
    }

    public void OnSwitch(in KernelEvent e, in EventSlots slots)
    {
        if (Accepts(e)) OnSwitch(e, slots.Prev, slots.Next);
    }

    public void OnWaking(in KernelEvent e, in EventSlots slots)
    {
        if (Accepts(e) && e.WokenTid > 0) OnWaking(e, slots.Pid, State(slots.Woken, e.WokenTid));
    }

    public void OnThreadEvidence(in KernelEvent e, in EventSlots slots) => Accepts(e);

    /// <summary>
    /// Starts the window clock at the first event; false past the region's end (nothing is kept there).
    /// </summary>
    private bool Accepts(in KernelEvent e)
    {
        if (!_clock.Started) _clock.Start(e.Timestamp);
        return !_region.HasEnd || e.Timestamp <= _region.End;
    }

    private FindingThread State(int tid) => _threads.At(_accounting.Slots.SlotOf(tid), tid);

    private FindingThread State(int slot, int tid) => _threads.At(slot, tid);

    /// <summary>The state of the object <paramref name="t"/>'s current (or last) lock operation is on.</summary>
    private FindingObject ObjectOf(FindingThread t)
    {
        if (t.ObjState is { } o && o.Stats.Object == t.Lock.Object) return o;
        return t.ObjState = Object(t.Lock.Object);
    }

    private FindingObject Object(LockObject obj)
    {
        if (!_objects.TryGetValue(obj, out var o)) _objects[obj] = o = new FindingObject(obj, _clock.NewSeries());
        return o;
    }

    private void OnSyscallEnter(in KernelEvent e, FindingThread t)
    {
        Running(t, e.Timestamp);
        t.SyscallNr = e.SyscallNumber;
        t.SyscallEnter = e.Timestamp;
        t.BehindCountedUntil = long.MinValue;
        var op = t.Lock;
        if (op.Kind == LockOpKind.None) return;
        ref var d = ref t.Deschedule;
        d.FirstOpAfter = d.Start != None && d.Start > d.LastLockOpEnter;
        d.LastLockOpEnter = e.Timestamp;
        if (d.FirstOpAfter && op.Kind is LockOpKind.Wake or LockOpKind.Semop
            && _objects.TryGetValue(op.Object, out var held))
            _descheduledHolders.Count(t, held);
        if (t.LastWake.Wakee is { } wakee)
        {
            // The waker's first lock operation since the wakeup releases the very object the woken thread is now
            // blocked on: it held that lock when it woke it (docs/metrics.md, "Findings", wake while holding).
            t.LastWake.Wakee = null;
            if (op.Kind is LockOpKind.Wake or LockOpKind.Semop && wakee.Cycle.Candidate && wakee.Cycle.Waker == t.Tid
                && wakee.Cycle.Object == op.Object && wakee.Lock.InOperation && wakee.Lock.Object == op.Object
                && wakee.Lock.HasBlocked)
            {
                wakee.Cycle.InCycle = true;
                wakee.Cycle.Candidate = false;
                ObjectOf(t).Stats.WakeWhileHoldingWakers.Add(t.Tid);
            }
        }
        if (!t.Wakeup.AwaitingFirstOp) return;
        t.Wakeup.AwaitingFirstOp = false;
        // Woken, then the very first lock operation waits on a different object than the one it was woken from.
        t.Cycle = new WakeCycle
        {
            Candidate = op.Kind is LockOpKind.Wait or LockOpKind.Semop
                && !(t.Wakeup.FromObject && t.Wakeup.From == op.Object),
            Object = op.Object,
            Waker = t.Wakeup.By,
            WokenAt = t.Wakeup.At,
            InCycle = t.Cycle.InCycle,
        };
    }

    /// <summary>A blocked lock operation returns: its blocked time on the object (the exit's own evidence
    /// follows).</summary>
    void ILockOperationObserver.OnExiting(ThreadLockOperation op, in KernelEvent e)
    {
        if (!op.HasBlocked || !Accepts(e)) return;
        var t = State(op.Slot, e.CurrentTid);
        if (t.SyscallNr < 0) return;
        var o = ObjectOf(t);
        o.Waiters.Remove(t);
        var ns = _region.Overlap(t.SyscallEnter, e.Timestamp);
        if (ns > 0)
        {
            o.Stats.BlockedNs.AddTo(t.Tid, ns);
            AddClipped(o.Blocked, t.SyscallEnter, e.Timestamp);
        }
        if (_region.Contains(e.Timestamp)) o.Stats.BlockingWaits++;
    }

    private void OnSyscallExit(in KernelEvent e, FindingThread t)
    {
        Running(t, e.Timestamp);
        if (t.SyscallNr < 0) return;
        if (t.Cycle.InCycle)
        {
            t.Cycle.InCycle = false;
            var o = ObjectOf(t).Stats;
            var ns = _region.Overlap(t.Cycle.WokenAt, e.Timestamp);
            if (ns > 0)
            {
                o.WakeWhileHoldingNs.AddTo(t.Tid, ns);
                AddClipped(_wakeWhileHolding, t.Cycle.WokenAt, e.Timestamp);
            }
            if (_region.Contains(e.Timestamp))
                o.WakeWhileHoldingCycles[t.Tid] = o.WakeWhileHoldingCycles.GetValueOrDefault(t.Tid) + 1;
        }
        if (t.SyscallNr == LinuxSyscalls.SchedYield) Descheduled(t, t.SyscallEnter, e.Timestamp);
        t.SyscallNr = -1;
    }

    private static void Descheduled(FindingThread t, long start, long end, bool byWakee = false)
    {
        ref var d = ref t.Deschedule;
        d.Start = start;
        d.End = end;
        d.ByWakee = byWakee;
        d.WakeInOp = byWakee && t.Preemption.WakeInOp;
        d.WakeObject = t.Preemption.WakeObject;
    }

    /// <summary>An event of the thread's own proves it runs: close what only a switch-in would otherwise
    /// close.</summary>
    private void Running(FindingThread t, long ts)
    {
        if (t.CreatedAt != None)
        {
            var ns = _region.Overlap(t.CreatedAt, ts);
            if (ns > 0)
            {
                t.Stats.StartReadyNs += ns;
                AddClipped(t.Ready ??= _clock.NewSeries(), t.CreatedAt, ts);
            }
            t.CreatedAt = None;
        }
        if (t.Preemption.At != None)
        {
            if (t.Preemption.ByWakee) Descheduled(t, t.Preemption.At, ts, byWakee: true);
            EndPreemption(t, ts);
        }
        if (t.Deschedule.SleepStart != None)
        {
            Descheduled(t, t.Deschedule.SleepStart, ts);
            t.Deschedule.SleepStart = None;
        }
    }

    private void EndPreemption(FindingThread t, long ts)
    {
        ref var p = ref t.Preemption;
        var ns = _region.Overlap(p.At, ts);
        if (ns > 0)
        {
            t.Stats.PreemptedReadyNs += ns;
            AddClipped(t.Ready ??= _clock.NewSeries(), p.At, ts);
            if (!p.ByWakee && p.Preemptor > 0) t.Stats.ReadyByPreemptor.AddTo(p.Preemptor, ns);
            if (p.ByHigherPriority)
            {
                t.Stats.HigherPriorityReadyNs += ns;
                AddClipped(_higherPriority, p.At, ts);
            }
        }
        p.At = None;
    }

    /// <summary>The first switch-out inside a lock operation: the thread now waits on its object.</summary>
    void ILockOperationObserver.OnBlocked(ThreadLockOperation op, in KernelEvent e)
    {
        if (!Accepts(e)) return;
        var t = State(op.Slot, e.PrevTid);
        if (t.SyscallNr >= 0) ObjectOf(t).Waiters.Add(t);
    }

    private void OnSwitch(in KernelEvent e, int prevSlot, int nextSlot)
    {
        var ts = e.Timestamp;
        if (e.PrevTid > 0)
        {
            var prev = State(prevSlot, e.PrevTid);
            if (TaskState.IsPreempted(e.PrevState))
            {
                // A yield's switch-out is the thread's own choice, not a preemption.
                if (prev.SyscallNr != LinuxSyscalls.SchedYield && prev.Preemption.At == None)
                    Preempted(e, prev, e.NextTid > 0 ? State(nextSlot, e.NextTid) : null);
            }
            // Blocked in a lock operation is a wait on its object (OnBlocked), not a sleep.
            else if (prev.SyscallNr != LinuxSyscalls.SchedYield && !(prev.SyscallNr >= 0 && prev.Lock.InOperation))
                prev.Deschedule.SleepStart = ts;
        }
        if (e.NextTid > 0)
        {
            var next = State(nextSlot, e.NextTid);
            Running(next, ts);
            next.LastSwitchIn = ts;
        }
    }

    private void Preempted(in KernelEvent e, FindingThread prev, FindingThread? next)
    {
        ref var p = ref prev.Preemption;
        p.At = e.Timestamp;
        p.ByHigherPriority = e.NextTid > 0 && e.NextPrio < e.PrevPrio;
        p.Preemptor = e.NextTid;
        // The thread it woke a moment ago took its CPU: the wakeup's cost (a handoff), not too many threads.
        p.ByWakee = next is not null && next.Wakeup.By == prev.Tid && next.Wakeup.At >= next.LastSwitchIn;
        p.WakeInOp = prev.LastWake.InOp;
        p.WakeObject = prev.LastWake.Object;
        if (_region.Contains(e.Timestamp))
        {
            if (p.ByWakee) prev.Stats.WakePreemptions++;
            prev.Stats.Preemptions++;
            if (p.ByHigherPriority) prev.Stats.HigherPriorityPreemptions++;
        }
    }

    private void OnWaking(in KernelEvent e, int pidSlot, FindingThread w)
    {
        var blockedInOp = w.Lock.InOperation && w.Lock.HasBlocked;
        if (!blockedInOp && w.Deschedule.SleepStart == None) return; // not blocked: a spurious wakeup changes nothing
        var threadContext = e.CurrentTid > 0 && !EventFlags.InInterrupt(e.Flags);
        var g = threadContext ? State(pidSlot, e.CurrentTid) : null;
        if (g is not null && blockedInOp && g.Lock.Kind is LockOpKind.Wake or LockOpKind.Semop
            && g.Lock.Object == w.Lock.Object)
            ObjectOf(w).Stats.Releasers.Add(g.Tid); // g's operation on the object ended w's wait on it
        if (g is not null) g.LastWake = new LastWake { Wakee = w, InOp = g.Lock.InOperation, Object = g.Lock.Object };
        w.Wakeup = new Wakeup { By = g?.Tid ?? -1, At = e.Timestamp, FromObject = blockedInOp, From = w.Lock.Object };
        w.Wakeup.AwaitingFirstOp = true;
        w.Cycle.Candidate = false;
    }

    private void AddClipped(WindowSeries series, long a, long b) => series.AddClipped(a, b, _region);

    public void OnRegionBegin()
    {
        _clock.Start(_region.Begin);
        foreach (var (_, t) in _threads.InOrder) t.Stats.ResetCounts();
        foreach (var o in _objects.Values) o.Stats.ResetCounts();
    }

    public void Complete(long end)
    {
        foreach (var (_, t) in _threads.InOrder)
        {
            if (t.Preemption.At != None) EndPreemption(t, end);
            if (t.CreatedAt != None) t.Stats.StartReadyNs += _region.Overlap(t.CreatedAt, end);
        }
    }

    /// <summary>The evidence, once <see cref="Complete"/> has run.</summary>
    public FindingEvidence Result()
    {
        foreach (var (_, t) in _threads.InOrder) t.Stats.PreemptedReady = t.Ready?.Snapshot() ?? BucketSeries.Empty;
        foreach (var o in _objects.Values) o.Stats.Blocked = o.Blocked.Snapshot();
        return new FindingEvidence
        {
            Threads = _threads.InOrder.ToDictionary(x => x.Tid, x => x.Value.Stats),
            Objects = _objects.ToDictionary(kv => kv.Key, kv => kv.Value.Stats),
            HoldingDescheduled = _holding.Snapshot(),
            WakeWhileHolding = _wakeWhileHolding.Snapshot(),
            HigherPriorityReady = _higherPriority.Snapshot(),
        };
    }
}
