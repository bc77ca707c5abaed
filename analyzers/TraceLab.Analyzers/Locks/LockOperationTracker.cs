using System.Runtime.CompilerServices;
using TraceLab.Core;

namespace TraceLab.Analyzers.Locks;

/// <summary>
/// Follows each thread's current lock operation through its phases (<see cref="LockPhase"/>: entered, blocked,
/// woken, running) and the release that ends its wait, once per pass, for every analysis built on lock operations
/// (convoys, findings evidence): they read <see cref="ThreadLockOperation"/> and subscribe to its transitions
/// (<see cref="ILockOperationObserver"/>) instead of keeping their own copy. One per pass
/// (<see cref="Of"/>), fed every syscall, switch and waking before the pass's analyzers (docs/architecture.md#locks).
/// </summary>
/// <remarks>
/// A syscall is an operation on a lock object as <see cref="LockOperation.Classify"/> says, scoped to its thread's
/// process (<see cref="LockScope"/>); syscall events logged in interrupt context or by no thread are not a thread's
/// own and are skipped. A release is a waking of a thread waiting in a wait or semop by a thread operating on the
/// same object with a wake or semop (docs/metrics.md#handoffs). Without any lock syscall in the trace, a voluntary
/// block for a lock-type reason ended by a thread of the same process is an inferred wait on an
/// <see cref="LockObjectKind.Inferred"/> object, acquired when the woken thread runs.
/// <para>
/// The entry points are never inlined into <see cref="AnalysisPass"/>'s event path: they are long, and the inlining
/// budget they would spend there is what keeps the analyzers' own entry points inlined.
/// </para>
/// </remarks>
public sealed class LockOperationTracker : IPerKindAnalyzer
{
    private readonly ThreadAccounting _accounting;
    private SlotTable<ThreadLockOperation> _threads = new(static (tid, slot) => new ThreadLockOperation(tid, slot));
    // Per transition, the subscribers that want it (arrays: no enumerator; nobody is called for what it ignores).
    private ILockOperationObserver[] _entered = [], _blocked = [], _exiting = [], _inferredAcquired = [];

    private LockOperationTracker(ThreadAccounting accounting) => _accounting = accounting;

    /// <summary>The tracker of <paramref name="accounting"/>'s pass, made at the first request.</summary>
    public static LockOperationTracker Of(ThreadAccounting accounting) =>
        accounting.Stages.Of(static a => new LockOperationTracker(a));

    /// <summary>True once any syscall on a lock object was seen: objects are named, not inferred.</summary>
    public bool SawLockSyscalls { get; private set; }

    /// <summary>
    /// Adds a subscriber to the <paramref name="transitions"/> it implements; subscribe before the first event.
    /// </summary>
    public void Subscribe(ILockOperationObserver observer, LockTransitions transitions)
    {
        ArgumentNullException.ThrowIfNull(observer);
        void To(ref ILockOperationObserver[] list, LockTransitions one)
        {
            if ((transitions & one) != 0) list = [.. list, observer];
        }
        To(ref _entered, LockTransitions.Entered);
        To(ref _blocked, LockTransitions.Blocked);
        To(ref _exiting, LockTransitions.Exiting);
        To(ref _inferredAcquired, LockTransitions.InferredAcquired);
    }

    /// <summary>The lock operation of the thread <paramref name="tid"/> in <paramref name="slot"/>.</summary>
    public ThreadLockOperation At(int slot, int tid) => _threads.At(slot, tid);

    /// <summary>
    /// The lock operation of the thread in <paramref name="slot"/>; null when it never had an event here.
    /// </summary>
    public ThreadLockOperation? Find(int slot) => _threads.Find(slot);

    public PerKindEvents Wants => PerKindEvents.SyscallsAndScheduling;

    /// <summary>
    /// The earliest release of an operation still waiting to be handed over (released, not yet exited or acquired);
    /// <see cref="long.MaxValue"/> when none.
    /// </summary>
    public long EarliestOpenRelease()
    {
        var earliest = long.MaxValue;
        foreach (var (_, t) in _threads.InOrder)
            if (t.IsReleased && t.ReleasedAt < earliest) earliest = t.ReleasedAt;
        return earliest;
    }

    public void OnEvent(in KernelEvent e) => PerKindEntryPoints.Dispatch(this, e, _accounting.Slots);

    public void OnRegionBegin()
    {
    }

    public void Complete(long end)
    {
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void OnSyscallEnter(in KernelEvent e, in EventSlots slots)
    {
        if (EventFlags.InInterrupt(e.Flags) || e.CurrentTid <= 0) return;
        var t = _threads.At(slots.Pid, e.CurrentTid);
        var kind = LockOperation.Classify(e, out var obj);
        // A per-process object whose process the trace does not identify stays keyed by its number alone (as
        // before processes were told apart): threads of one unidentified process must still meet on it.
        t.Object = _accounting.Lineage.Scoped(obj, e.CurrentTid, slots.Pid);
        t.Kind = kind;
        t.EnteredAt = e.Timestamp;
        t.Releaser = 0;
        t.RunningAt = ThreadLockOperation.Never;
        if (kind == LockOpKind.None)
        {
            t.Phase = LockPhase.None;
            return;
        }
        SawLockSyscalls = true;
        t.Phase = LockPhase.Entered;
        foreach (var o in _entered) o.OnEntered(t, e);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void OnSyscallExit(in KernelEvent e, in EventSlots slots)
    {
        if (EventFlags.InInterrupt(e.Flags) || e.CurrentTid <= 0) return;
        var t = _threads.At(slots.Pid, e.CurrentTid);
        RunningOwnEvent(t, e.CurrentTid, e.Timestamp);
        if (t.Kind != LockOpKind.None)
        {
            foreach (var o in _exiting) o.OnExiting(t, e);
            t.Kind = LockOpKind.None;
        }
        t.Releaser = 0;
        t.RunningAt = ThreadLockOperation.Never;
    }

    /// <summary>
    /// The thread's own event shows it running: if its switch-in after the release was not logged, take the repaired
    /// start.
    /// </summary>
    private void RunningOwnEvent(ThreadLockOperation t, int tid, long ts)
    {
        if (!t.IsReleased || t.RanSinceRelease) return;
        t.RunningAt = _accounting.TryGetRunningSince(tid, out var since) && since >= t.ReleasedAt && since <= ts
            ? since
            : ts;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void OnWaking(in KernelEvent e, in EventSlots slots)
    {
        var woken = e.WokenTid;
        if (woken <= 0) return;
        var b = _threads.At(slots.Woken, woken);
        if (b.Kind != LockOpKind.None && b.Phase == LockPhase.Blocked) b.Phase = LockPhase.Woken;
        var giver = EventFlags.InInterrupt(e.Flags) || e.CurrentTid <= 0 ? 0 : e.CurrentTid;
        if (b.Kind is LockOpKind.Wait or LockOpKind.Semop)
        {
            if (giver > 0 && _threads.Find(slots.Pid) is { } a && a.Kind is LockOpKind.Wake or LockOpKind.Semop
                && a.Object == b.Object)
                Released(b, giver, slots.Pid, e.Timestamp, b.EnteredAt);
            return;
        }
        // Inference: no syscall names what the thread waits for.
        if (!SawLockSyscalls && b.Kind == LockOpKind.None && b.BlockedSince != ThreadLockOperation.Never && giver > 0
            && LockOperation.IsLockWaitReason(b.BlockReason))
        {
            var process = _accounting.Lineage.ProcessOf(woken, slots.Woken);
            if (process == _accounting.Lineage.ProcessOf(giver, slots.Pid))
            {
                b.Object = new LockObject(LockObjectKind.Inferred, process);
                Released(b, giver, slots.Pid, e.Timestamp, b.BlockedSince);
            }
        }
    }

    /// <param name="giverSlot">The giver logged the waking: the event's <see cref="EventSlots.Pid"/>.</param>
    private static void Released(ThreadLockOperation b, int giver, int giverSlot, long ts, long queuedAt)
    {
        b.Releaser = giver;
        b.ReleaserSlot = giverSlot;
        b.ReleasedAt = ts;
        b.QueuedAt = queuedAt;
        // Woken before it got off the CPU: it is already running.
        b.RunningAt = !b.HasBlocked && b.BlockedSince == ThreadLockOperation.Never ? ts : ThreadLockOperation.Never;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void OnSwitch(in KernelEvent e, in EventSlots slots)
    {
        var ts = e.Timestamp;
        if (e.PrevTid > 0)
        {
            var p = _threads.At(slots.Prev, e.PrevTid);
            var preempted = TaskState.IsPreempted(e.PrevState);
            p.BlockedSince = preempted ? ThreadLockOperation.Never : ts;
            p.BlockReason = e.PrevWaitReason;
            if (!preempted)
            {
                if (p.Kind == LockOpKind.None) p.Releaser = 0;
                else if (p.Phase == LockPhase.Entered)
                {
                    p.Phase = LockPhase.Blocked;
                    foreach (var o in _blocked) o.OnBlocked(p, e);
                }
            }
        }
        if (e.NextTid > 0 && _threads.Find(slots.Next) is { } n)
        {
            n.BlockedSince = ThreadLockOperation.Never;
            if (n.Phase == LockPhase.Woken && n.Kind != LockOpKind.None) n.Phase = LockPhase.Running;
            if (n.IsReleased && !n.RanSinceRelease)
            {
                n.RunningAt = ts;
                if (n.Kind == LockOpKind.None && n.Object.Kind == LockObjectKind.Inferred)
                {
                    foreach (var o in _inferredAcquired) o.OnInferredAcquired(n, e);
                    n.Releaser = 0;
                }
            }
        }
    }
}
