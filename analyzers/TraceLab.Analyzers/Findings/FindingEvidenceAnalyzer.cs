using System.Runtime.InteropServices;
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
/// </remarks>
public sealed class FindingEvidenceAnalyzer : IPerKindAnalyzer
{
    /// <summary>
    /// The "findings" analysis (docs/metrics.md, "Findings"): this collector in the pass, the rules over the report
    /// after it (TraceLab.Reporting's FindingsReport).
    /// </summary>
    public static readonly AnalysisDefinition Analysis =
        new("findings", 12, c => new FindingEvidenceAnalyzer(c.Accounting));

    private const long None = long.MinValue;

    private readonly ThreadAccounting _accounting;
    private readonly MeasuredRegion _region;
    private readonly WindowClock _clock = new();
    private readonly WindowSeries _holding;
    private readonly WindowSeries _wakeWhileHolding;
    private readonly WindowSeries _higherPriority;
    private SlotTable<ThreadState> _threads = new((tid, _) => new ThreadState(tid));
    private readonly Dictionary<LockObject, ObjectState> _objects = [];

    public FindingEvidenceAnalyzer(ThreadAccounting accounting)
    {
        _accounting = accounting;
        _region = accounting.Region;
        _holding = _clock.NewSeries();
        _wakeWhileHolding = _clock.NewSeries();
        _higherPriority = _clock.NewSeries();
    }

    private sealed class ThreadState(int tid)
    {
        public readonly int Tid = tid;
        public readonly ThreadEvidence Stats = new() { Tid = tid };
        /// <summary>Created at the first preemption: most threads of a trace are never preempted.</summary>
        public WindowSeries? Ready;

        public int SyscallNr = -1;
        public long SyscallEnter;
        public bool BlockedInSyscall;
        /// <summary>Blocked in the current lock operation and already woken.</summary>
        public bool Woken;
        /// <summary>Its current wait counted as behind a descheduled holder up to here (two holders of a semaphore
        /// off the CPU at once do not count the same time twice).</summary>
        public long BehindCountedUntil;
        public LockOpKind Op;
        public LockObject Obj;
        /// <summary>The state of <see cref="Obj"/> when last looked up (checked against it before use): a blocked
        /// lock operation needs it at its switch-out and its exit, one hashed lookup instead of two.</summary>
        public ObjectState? ObjState;

        /// <summary>Voluntary switch-out outside a lock operation (a sleep, I/O): when, until it runs again.</summary>
        public long SleepStart = None;
        /// <summary>The last yield or sleep: a holder descheduled over [start, end].</summary>
        public long DeschedStart = None, DeschedEnd = None;
        /// <summary>The last deschedule was a preemption by a thread it had just woken (see <see
        /// cref="WakePreemption"/>).</summary>
        public bool DeschedByWakee;
        /// <summary>That wakeup happened inside a lock operation on this object (a release handing it over).</summary>
        public bool DeschedWakeInOp;
        public LockObject DeschedWakeObj;
        /// <summary>Where its last wakeup of another thread was issued: inside a lock operation on an object, or
        /// not.</summary>
        public bool LastWakeInOp;
        public LockObject LastWakeObj;
        public bool PreemptWakeInOp;
        public LockObject PreemptWakeObj;
        public long LastLockOpEnter = None;
        /// <summary>The current lock operation is the first since the last deschedule (so the lock was held across
        /// it).</summary>
        public bool FirstOpAfterDesched;

        public long PreemptedAt = None;
        public bool ByHigherPriority;
        /// <summary>Created (sched_wakeup_new) and not yet run.</summary>
        public long CreatedAt = None;
        /// <summary>The task that took the CPU at the preemption, and whether the preempted thread had just woken
        /// it.</summary>
        public int Preemptor;
        public bool WakePreemption;
        public long LastSwitchIn = None;

        /// <summary>The last wakeup from a block: by whom, when, and the object waited on then (if any).</summary>
        public int WokenBy;
        public long WokenAt = None;
        public bool WokenFromObject;
        public LockObject WokenFrom;
        public bool AwaitingFirstOp;
        /// <summary>A wake-while-holding candidate: after the wakeup, the first lock operation blocked on another
        /// object.</summary>
        public bool Candidate;
        public LockObject CandidateObj;
        public int CandidateWaker;
        public long CandidateWokenAt;
        /// <summary>The waker released the candidate's object while this thread was blocked on it: a cycle, closed at
        /// the wait's exit.</summary>
        public bool InCycle;
        /// <summary>The thread this one last woke from a block, until its own next lock operation.</summary>
        public ThreadState? LastWakee;
    }

    private sealed class ObjectState(LockObject obj, WindowSeries blocked)
    {
        public readonly ObjectEvidence Stats = new() { Object = obj };
        public readonly WindowSeries Blocked = blocked;
        /// <summary>Threads blocked in a lock operation on the object right now (bounded by threads).</summary>
        public readonly List<ThreadState> Waiters = [];
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
        if (Accepts(e) && e.CurrentTid > 0) OnSyscallEnter(e, State(slots.Pid, e.CurrentTid), slots.Pid);
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

    private ThreadState State(int tid) => _threads.At(_accounting.Slots.SlotOf(tid), tid);

    private ThreadState State(int slot, int tid) => _threads.At(slot, tid);

    /// <summary>The state of the object <paramref name="t"/>'s current operation is on.</summary>
    private ObjectState ObjectOf(ThreadState t)
    {
        if (t.ObjState is { } o && o.Stats.Object == t.Obj) return o;
        return t.ObjState = Object(t.Obj);
    }

    /// <summary>Adds <paramref name="ns"/> to <paramref name="tid"/>'s entry: one hashed lookup.</summary>
    private static void Add(Dictionary<int, long> perThread, int tid, long ns) =>
        CollectionsMarshal.GetValueRefOrAddDefault(perThread, tid, out _) += ns;

    private ObjectState Object(LockObject obj)
    {
        if (!_objects.TryGetValue(obj, out var o)) _objects[obj] = o = new ObjectState(obj, _clock.NewSeries());
        return o;
    }

    private void OnSyscallEnter(in KernelEvent e, ThreadState t, int slot)
    {
        Running(t, e.Timestamp);
        t.SyscallNr = e.SyscallNumber;
        t.SyscallEnter = e.Timestamp;
        t.BlockedInSyscall = t.Woken = false;
        t.BehindCountedUntil = long.MinValue;
        t.Op = LockOperation.Classify(e, out var obj);
        t.Obj = _accounting.Lineage.Scoped(obj, e.CurrentTid, slot);
        if (t.Op == LockOpKind.None) return;
        t.FirstOpAfterDesched = t.DeschedStart != None && t.DeschedStart > t.LastLockOpEnter;
        t.LastLockOpEnter = e.Timestamp;
        if (t.FirstOpAfterDesched && t.Op is LockOpKind.Wake or LockOpKind.Semop) HeldAcrossDeschedule(t);
        if (t.LastWakee is { } wakee)
        {
            // The waker's first lock operation since the wakeup releases the very object the woken thread is now
            // blocked on: it held that lock when it woke it (docs/metrics.md, "Findings", wake while holding).
            t.LastWakee = null;
            if (t.Op is LockOpKind.Wake or LockOpKind.Semop && wakee.Candidate && wakee.CandidateWaker == t.Tid
                && wakee.CandidateObj == t.Obj && wakee.Op != LockOpKind.None && wakee.Obj == t.Obj
                && wakee.BlockedInSyscall)
            {
                wakee.InCycle = true;
                wakee.Candidate = false;
                ObjectOf(t).Stats.WakeWhileHoldingWakers.Add(t.Tid);
            }
        }
        if (!t.AwaitingFirstOp) return;
        t.AwaitingFirstOp = false;
        // Woken, then the very first lock operation waits on a different object than the one it was woken from.
        t.Candidate = t.Op is LockOpKind.Wait or LockOpKind.Semop && !(t.WokenFromObject && t.WokenFrom == t.Obj);
        t.CandidateObj = t.Obj;
        t.CandidateWaker = t.WokenBy;
        t.CandidateWokenAt = t.WokenAt;
    }

    private void OnSyscallExit(in KernelEvent e, ThreadState t)
    {
        Running(t, e.Timestamp);
        if (t.SyscallNr < 0) return;
        if (t.Op != LockOpKind.None && t.BlockedInSyscall)
        {
            var o = ObjectOf(t);
            o.Waiters.Remove(t);
            var ns = _region.Overlap(t.SyscallEnter, e.Timestamp);
            if (ns > 0)
            {
                Add(o.Stats.BlockedNs, t.Tid, ns);
                AddClipped(o.Blocked, t.SyscallEnter, e.Timestamp);
            }
            if (_region.Contains(e.Timestamp)) o.Stats.BlockingWaits++;
        }
        if (t.InCycle)
        {
            t.InCycle = false;
            var o = ObjectOf(t).Stats;
            var ns = _region.Overlap(t.CandidateWokenAt, e.Timestamp);
            if (ns > 0)
            {
                Add(o.WakeWhileHoldingNs, t.Tid, ns);
                AddClipped(_wakeWhileHolding, t.CandidateWokenAt, e.Timestamp);
            }
            if (_region.Contains(e.Timestamp))
                o.WakeWhileHoldingCycles[t.Tid] = o.WakeWhileHoldingCycles.GetValueOrDefault(t.Tid) + 1;
        }
        if (t.SyscallNr == LinuxSyscalls.SchedYield) Descheduled(t, t.SyscallEnter, e.Timestamp);
        t.SyscallNr = -1;
        t.Op = LockOpKind.None;
    }

    private static void Descheduled(ThreadState t, long start, long end, bool byWakee = false)
    {
        t.DeschedStart = start;
        t.DeschedEnd = end;
        t.DeschedByWakee = byWakee;
        t.DeschedWakeInOp = byWakee && t.PreemptWakeInOp;
        t.DeschedWakeObj = t.PreemptWakeObj;
    }

    /// <summary>An event of the thread's own proves it runs: close what only a switch-in would otherwise
    /// close.</summary>
    private void Running(ThreadState t, long ts)
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
        if (t.PreemptedAt != None)
        {
            if (t.WakePreemption) Descheduled(t, t.PreemptedAt, ts, byWakee: true);
            EndPreemption(t, ts);
        }
        if (t.SleepStart != None)
        {
            Descheduled(t, t.SleepStart, ts);
            t.SleepStart = None;
        }
    }

    private void EndPreemption(ThreadState t, long ts)
    {
        var ns = _region.Overlap(t.PreemptedAt, ts);
        if (ns > 0)
        {
            t.Stats.PreemptedReadyNs += ns;
            AddClipped(t.Ready ??= _clock.NewSeries(), t.PreemptedAt, ts);
            if (!t.WakePreemption && t.Preemptor > 0)
                Add(t.Stats.ReadyByPreemptor, t.Preemptor, ns);
            if (t.ByHigherPriority)
            {
                t.Stats.HigherPriorityReadyNs += ns;
                AddClipped(_higherPriority, t.PreemptedAt, ts);
            }
        }
        t.PreemptedAt = None;
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
                if (prev.SyscallNr != LinuxSyscalls.SchedYield && prev.PreemptedAt == None)
                {
                    prev.PreemptedAt = ts;
                    prev.ByHigherPriority = e.NextTid > 0 && e.NextPrio < e.PrevPrio;
                    prev.Preemptor = e.NextTid;
                    // The thread it woke a moment ago took its CPU: the wakeup's cost (a handoff), not too many
                    // threads.
                    var next = e.NextTid > 0 ? State(nextSlot, e.NextTid) : null;
                    prev.WakePreemption = next is not null && next.WokenBy == prev.Tid
                        && next.WokenAt >= next.LastSwitchIn;
                    prev.PreemptWakeInOp = prev.LastWakeInOp;
                    prev.PreemptWakeObj = prev.LastWakeObj;
                    if (_region.Contains(ts))
                    {
                        if (prev.WakePreemption) prev.Stats.WakePreemptions++;
                        prev.Stats.Preemptions++;
                        if (prev.ByHigherPriority) prev.Stats.HigherPriorityPreemptions++;
                    }
                }
            }
            else if (prev.SyscallNr >= 0 && prev.Op != LockOpKind.None)
            {
                if (!prev.BlockedInSyscall) ObjectOf(prev).Waiters.Add(prev);
                prev.BlockedInSyscall = true;
            }
            else if (prev.SyscallNr != LinuxSyscalls.SchedYield) prev.SleepStart = ts;
        }
        if (e.NextTid > 0)
        {
            var next = State(nextSlot, e.NextTid);
            Running(next, ts);
            next.LastSwitchIn = ts;
        }
    }

    private void OnWaking(in KernelEvent e, int pidSlot, ThreadState w)
    {
        var blockedInOp = w.Op != LockOpKind.None && w.BlockedInSyscall;
        if (!blockedInOp && w.SleepStart == None) return; // not blocked: a spurious wakeup changes nothing
        var threadContext = e.CurrentTid > 0 && !EventFlags.InInterrupt(e.Flags);
        var g = threadContext ? State(pidSlot, e.CurrentTid) : null;
        if (blockedInOp) w.Woken = true;
        if (g is not null && blockedInOp && g.Op is LockOpKind.Wake or LockOpKind.Semop && g.Obj == w.Obj)
            OnRelease(g, w);
        if (g is not null)
        {
            g.LastWakee = w;
            g.LastWakeInOp = g.Op != LockOpKind.None;
            g.LastWakeObj = g.Obj;
        }
        w.WokenBy = g?.Tid ?? -1;
        w.WokenAt = e.Timestamp;
        w.WokenFromObject = blockedInOp;
        w.WokenFrom = w.Obj;
        w.AwaitingFirstOp = true;
        w.Candidate = false;
    }

    /// <summary><paramref name="g"/>'s operation on an object ended <paramref name="w"/>'s wait on it.</summary>
    private void OnRelease(ThreadState g, ThreadState w) => ObjectOf(w).Stats.Releasers.Add(g.Tid);

    /// <summary>
    /// <paramref name="g"/>'s first lock operation since it yielded or slept releases an object on which a thread
    /// that is still waiting began to wait during that deschedule: <paramref name="g"/> held the object all along
    /// (docs/metrics.md, "Findings", yield or sleep while holding). Every thread then blocked on the object waited
    /// behind the descheduled holder while the holder was off the CPU: from the later of its wait's start and the
    /// deschedule's until the deschedule's end. What the holder then ran before releasing is the critical section's
    /// own time, which it would have taken without the deschedule.
    /// </summary>
    private void HeldAcrossDeschedule(ThreadState g)
    {
        if (!_objects.TryGetValue(g.Obj, out var o)) return;
        // Preempted by a thread it woke by releasing this very object: a handoff's cost, not a lock held meanwhile.
        if (g.DeschedByWakee && g.DeschedWakeInOp && g.DeschedWakeObj == g.Obj) return;
        var queuedDuring = false;
        foreach (var w in o.Waiters)
            if (!w.Woken && w != g && w.SyscallEnter >= g.DeschedStart && w.SyscallEnter <= g.DeschedEnd)
                queuedDuring = true;
        if (!queuedDuring) return;
        var s = o.Stats;
        var held = _region.Overlap(g.DeschedStart, g.DeschedEnd);
        var holder = g.DeschedByWakee ? s.HolderWakePreemptedNs : s.HolderDescheduledNs;
        if (held > 0)
        {
            Add(holder, g.Tid, held);
            AddClipped(g.DeschedByWakee ? _wakeWhileHolding : _holding, g.DeschedStart, g.DeschedEnd);
        }
        if (_region.Contains(g.DeschedEnd))
        {
            if (g.DeschedByWakee) s.WakePreemptionsWhileHolding++;
            else s.DeschedulesWhileHolding++;
        }
        var behind = g.DeschedByWakee ? s.WaitBehindWakePreemptedNs : s.WaitBehindDescheduledNs;
        foreach (var w in o.Waiters)
        {
            if (w.Woken || w == g) continue;
            var since = Math.Max(Math.Max(w.SyscallEnter, g.DeschedStart), w.BehindCountedUntil);
            if (since >= g.DeschedEnd) continue;
            w.BehindCountedUntil = g.DeschedEnd;
            var ns = _region.Overlap(since, g.DeschedEnd);
            if (ns <= 0) continue;
            Add(behind, w.Tid, ns);
            AddClipped(g.DeschedByWakee ? _wakeWhileHolding : _holding, since, g.DeschedEnd);
        }
    }

    private void AddClipped(WindowSeries series, long a, long b) =>
        series.AddInterval(Math.Max(a, _region.Begin), Math.Min(b, _region.End));

    public void OnRegionBegin()
    {
        _clock.Start(_region.Begin);
        foreach (var (_, t) in _threads.InOrder)
        {
            var s = t.Stats;
            s.Preemptions = s.PreemptedReadyNs = s.WakePreemptions = 0;
            s.HigherPriorityPreemptions = s.HigherPriorityReadyNs = 0;
            s.ReadyByPreemptor.Clear();
            s.StartReadyNs = 0;
        }
        foreach (var o in _objects.Values)
        {
            var s = o.Stats;
            s.BlockedNs.Clear();
            s.BlockingWaits = s.DeschedulesWhileHolding = s.WakePreemptionsWhileHolding = 0;
            s.HolderWakePreemptedNs.Clear();
            s.WaitBehindWakePreemptedNs.Clear();
            s.Releasers.Clear();
            s.HolderDescheduledNs.Clear();
            s.WaitBehindDescheduledNs.Clear();
            s.WakeWhileHoldingCycles.Clear();
            s.WakeWhileHoldingNs.Clear();
            s.WakeWhileHoldingWakers.Clear();
        }
    }

    public void Complete(long end)
    {
        foreach (var (_, t) in _threads.InOrder)
        {
            if (t.PreemptedAt != None) EndPreemption(t, end);
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
