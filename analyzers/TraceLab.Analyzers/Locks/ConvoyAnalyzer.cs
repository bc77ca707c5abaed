using TraceLab.Core;

namespace TraceLab.Analyzers.Locks;

/// <summary>
/// Finds lock handoffs and convoy episodes in one streaming pass (rules and thresholds:
/// docs/metrics.md#lock-convoys). A convoy (Blasgen et al., "The Convoy Phenomenon", 1979) is a lock that
/// keeps travelling through its
/// wait queue: each owner got it as a waiter, and releasing it grants it to the next waiter, which has not run yet,
/// so every acquisition costs a wakeup and a context switch. Here an episode is a chain of at least
/// <see cref="MinEpisodeHandoffs"/> handoffs on one object in which each giver is the previous receiver, passes the
/// lock on within <see cref="MaxHoldNs"/> of running with it, and no fast-path acquisition is seen in between.
/// Objects are named by the syscall that waits on them (futex address, semid, fd); without lock syscalls in the
/// trace (ETW without SystemCall events, or a Linux capture with --syscalls none) the object is inferred: a voluntary
/// wait for a lock-type reason ended by another thread of the same process.
/// </summary>
/// <remarks>
/// The lock operations themselves (entered, blocked, released, running again) are the pass's
/// <see cref="LockOperationTracker"/>'s: this analyzer subscribes to it and decides, at each operation's exit, whether
/// the release handed the lock over. Its own per-kind entry points feed the wake chains only.
/// </remarks>
public sealed class ConvoyAnalyzer : IPerKindAnalyzer, ILockOperationObserver
{
    public const int MinEpisodeHandoffs = 3;

    /// <summary>
    /// A receiver that keeps the lock longer than this before handing it on ends the episode: the lock is then
    /// serializing long critical sections (like a gate letting one thread run at a time), and the handoff cost no
    /// longer dominates its throughput, which is what makes a convoy a convoy.
    /// </summary>
    public const long MaxHoldNs = 1_000_000;

    private readonly MeasuredRegion _region;
    private readonly ThreadSlots _slots;
    private readonly LockOperationTracker _operations;
    private readonly ConvoyLedger _ledger;
    private SlotTable<ConvoyThread> _threads = new(static (_, _) => new ConvoyThread());
    /// <summary>Locks found through their wake chains (docs/metrics.md#wake-chains), fed the same events.</summary>
    private readonly WakeChainTracker _chains;

    /// <param name="accounting">
    /// The pass's accounting: gives the measured region, the slots, and the pass's
    /// <see cref="LockOperationTracker"/>, which sees every event before this analyzer (see
    /// <see cref="AnalysisPass"/>).
    /// </param>
    public ConvoyAnalyzer(ThreadAccounting accounting)
    {
        _region = accounting.Region;
        _slots = accounting.Slots;
        _ledger = new ConvoyLedger(accounting.Region, accounting.Slots);
        _operations = LockOperationTracker.Of(accounting);
        _operations.Subscribe(
            this, LockTransitions.Entered | LockTransitions.Exiting | LockTransitions.InferredAcquired);
        _chains = new WakeChainTracker(this, accounting);
    }

    /// <summary>True once any syscall on a lock object was seen: objects are named, not inferred.</summary>
    public bool SawLockSyscalls => _operations.SawLockSyscalls;
    /// <summary>
    /// Futex handoffs still unconfirmed at the end of the trace (the receiver's next operation on the object was not
    /// seen).
    /// </summary>
    public long UnconfirmedHandoffs { get; private set; }

    /// <summary>
    /// The earliest time a handoff or episode not yet reported to the observers, or whose report could still change,
    /// could carry, at time <paramref name="now"/>: the wake of a release not yet confirmed (a pending futex handoff,
    /// an operation released and not yet exited, a wake chain's release), or the start (at or before
    /// <paramref name="until"/>) of an open episode not settled (<see cref="ConvoyLedger.EarliestUnsettledEpisode"/>);
    /// <see cref="long.MaxValue"/> when none (the timeline's early end).
    /// </summary>
    public long EarliestUnreported(long now, long until)
    {
        var releases = Math.Min(_operations.EarliestOpenRelease(), _chains.EarliestPendingRelease());
        foreach (var (_, t) in _threads.InOrder)
            if (t.Pending && t.PendingHandoff.WokenAt < releases) releases = t.PendingHandoff.WokenAt;
        return Math.Min(releases, _ledger.EarliestUnsettledEpisode(until, Math.Min(now, releases)));
    }

    /// <summary>Adds a viewer that sees each handoff and counted episode (no effect on the statistics).</summary>
    public void AddObserver(IConvoyObserver observer) => _ledger.AddObserver(observer);

    public IEnumerable<LockObjectStats> Objects => _ledger.Objects;
    public IReadOnlyDictionary<int, ThreadConvoyStats> Threads => _ledger.Threads;

    /// <summary>What this analysis keeps per thread besides the tracker's operation.</summary>
    private sealed class ConvoyThread
    {
        /// <summary>
        /// Futex: the wait returned after a release woke it; whether it got the lock shows in its next operation on the
        /// object.
        /// </summary>
        public bool Pending;
        public Handoff PendingHandoff;
        public int PendingGiverSlot;
        /// <summary>semids this thread holds (semop parity; see docs/metrics.md#handoffs).</summary>
        public readonly SemIdSet SemHeld = new();
        /// <summary>The object of its operation when last resolved (see <see cref="ObjectOf"/>).</summary>
        public ConvoyObject? ObjState;
        /// <summary>
        /// The object whose <see cref="LockObjectStats.Waiters"/> this thread was last added to (cleared with them).
        /// </summary>
        public LockObjectStats? WaiterOf;
    }

    public void OnEvent(in KernelEvent e) => PerKindEntryPoints.Dispatch(this, e, _slots);

    // Per-kind entry points (IPerKindAnalyzer): the wake chains' events. The tracker has seen each event already.

    public PerKindEvents Wants => PerKindEvents.SyscallsAndScheduling;

    public void OnSyscallEnter(in KernelEvent e, in EventSlots slots)
    {
        if (!EventFlags.InInterrupt(e.Flags) && e.CurrentTid > 0) _chains.OnSyscallEnter(e, slots.Pid);
    }

    public void OnSyscallExit(in KernelEvent e, in EventSlots slots)
    {
        if (!EventFlags.InInterrupt(e.Flags) && e.CurrentTid > 0) _chains.OnSyscallExit(e, slots.Pid);
    }

    public void OnWaking(in KernelEvent e, in EventSlots slots) => _chains.OnWaking(e, slots.Pid, slots.Woken);

    public void OnSwitch(in KernelEvent e, in EventSlots slots) => _chains.OnSwitch(e, slots.Prev, slots.Next);

    /// <summary>The statistics of a wake-chain lock, made when its first handoff or lost race is seen.</summary>
    internal LockObjectStats ChainObject(in LockObject obj, string name, long maxHoldNs)
    {
        var o = _ledger.Object(obj);
        o.Stats.Name = name;
        o.MaxHoldNs = maxHoldNs;
        return o.Stats;
    }

    /// <summary>
    /// Names the wake-chain locks by the call site their waiters blocked at, once the stacks are named (<paramref
    /// name="siteOf"/>: a blocking stack id's call site, or null); see <see cref="WakeChainTracker.NameByCallSite"/>.
    /// </summary>
    public void NameWakeChainsByCallSite(Func<int, string?> siteOf) => _chains.NameByCallSite(siteOf);

    /// <summary>A wake-chain handoff, counted like a futex handoff (episodes use the object's hold limit).</summary>
    internal void ConfirmChain(in Handoff h, int receiverSlot, int giverSlot) =>
        _ledger.Confirm(h, receiverSlot, giverSlot);

    /// <summary>The object <paramref name="op"/> is on, remembered on the thread between its operations.</summary>
    private ConvoyObject ObjectOf(ConvoyThread t, ThreadLockOperation op)
    {
        if (t.ObjState is { } o && o.Stats.Object == op.Object) return o;
        return t.ObjState = _ledger.Object(op.Object);
    }

    // The lock operations' transitions (ILockOperationObserver).

    /// <summary>
    /// A new operation settles a futex wait's pending handoff: the lock was taken, or lost to another.
    /// </summary>
    void ILockOperationObserver.OnEntered(ThreadLockOperation op, in KernelEvent e)
    {
        if (_threads.Find(op.Slot) is not { Pending: true } t || t.PendingHandoff.Object != op.Object) return;
        t.Pending = false;
        if (op.Kind != LockOpKind.Wait) _ledger.Confirm(t.PendingHandoff, op.Slot, t.PendingGiverSlot);
        else if (_region.Contains(e.Timestamp))
        {
            // Woken by a release but found the lock taken (another thread barged in): not a handoff.
            _ledger.Object(op.Object).Stats.LostRaces++;
            _ledger.Stats(op.Slot, e.CurrentTid).LostRaces++;
        }
    }

    void ILockOperationObserver.OnExiting(ThreadLockOperation op, in KernelEvent e)
    {
        var t = _threads.At(op.Slot, e.CurrentTid);
        var ts = e.Timestamp;
        var inRegion = _region.Contains(ts);
        switch (op.Kind)
        {
            case LockOpKind.Semop:
                SemopDone(t, op, e, inRegion);
                break;
            case LockOpKind.Wait when op.IsReleased:
                if (op.Object.Kind == LockObjectKind.FileDescriptor)
                {
                    if (e.SyscallResult > 0)
                        _ledger.Confirm(MakeHandoff(op, e.CurrentTid, ts), op.Slot, op.ReleaserSlot);
                }
                else
                {
                    t.Pending = true;
                    t.PendingHandoff = MakeHandoff(op, e.CurrentTid, ts);
                    t.PendingGiverSlot = op.ReleaserSlot;
                }
                break;
        }
        if (op.HasBlocked && inRegion)
        {
            var o = ObjectOf(t, op).Stats;
            o.BlockingWaits++;
            // Usually already listed: skip the hash when this thread was last added to this very object's set.
            if (t.WaiterOf != o)
            {
                o.Waiters.Add(e.CurrentTid);
                t.WaiterOf = o;
            }
        }
    }

    /// <summary>A semop returned: an acquisition (handed over, or taken on the fast path) or a release.</summary>
    private void SemopDone(ConvoyThread t, ThreadLockOperation op, in KernelEvent e, bool inRegion)
    {
        var o = ObjectOf(t, op);
        if (e.SyscallResult != 0) return;
        var semid = op.Object.Id;
        if (op.IsReleased)
        {
            // System V semaphores complete a waiter's operation in the releaser's context: the waiter owns it on
            // wakeup.
            t.SemHeld.Add(semid);
            if (inRegion) o.Stats.Acquisitions++;
            _ledger.Confirm(MakeHandoff(op, e.CurrentTid, e.Timestamp), op.Slot, op.ReleaserSlot);
        }
        else if (op.HasBlocked || !t.SemHeld.Contains(semid))
        {
            t.SemHeld.Add(semid);
            if (inRegion)
            {
                o.Stats.Acquisitions++;
                if (!op.HasBlocked) o.Stats.FastAcquisitions++;
            }
            if (!op.HasBlocked) o.FastSinceHandoff = true;
        }
        else t.SemHeld.Remove(semid);
    }

    void ILockOperationObserver.OnInferredAcquired(ThreadLockOperation op, in KernelEvent e) =>
        _ledger.Confirm(MakeHandoff(op, e.NextTid, e.Timestamp), op.Slot, op.ReleaserSlot);

    private static Handoff MakeHandoff(ThreadLockOperation op, int receiver, long acquiredAt) =>
        new(op.Object, op.Releaser, receiver, op.QueuedAt, op.ReleasedAt,
            op.RanSinceRelease ? op.RunningAt : op.ReleasedAt, acquiredAt);

    public void OnRegionBegin()
    {
        _ledger.OnRegionBegin();
        _chains.OnRegionBegin();
        foreach (var (_, t) in _threads.InOrder) t.WaiterOf = null;
    }

    public void Complete(long end)
    {
        foreach (var (_, t) in _threads.InOrder)
            if (t.Pending)
            {
                t.Pending = false;
                UnconfirmedHandoffs++;
            }
        _ledger.Complete();
    }
}
