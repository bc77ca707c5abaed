using System.Runtime.InteropServices;
using TraceLab.Analyzers.Kernel;
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
public sealed class ConvoyAnalyzer : IPerKindAnalyzer
{
    public const int MinEpisodeHandoffs = 3;

    /// <summary>
    /// A receiver that keeps the lock longer than this before handing it on ends the episode: the lock is then
    /// serializing long critical sections (like a gate letting one thread run at a time), and the handoff cost no
    /// longer dominates its throughput, which is what makes a convoy a convoy.
    /// </summary>
    public const long MaxHoldNs = 1_000_000;

    private readonly ThreadAccounting _accounting;
    private readonly MeasuredRegion _region;
    private readonly ThreadSlots _slots;
    private SlotTable<LockThread> _threads = new(static (_, slot) => new LockThread(slot));
    private readonly Dictionary<LockObject, ObjectState> _objects = new();
    /// <summary>The object looked up last: a contended lock's events name the same object over and over.</summary>
    private ObjectState? _lastObject;
    private SlotTable<ThreadConvoyStats> _stats = new(static (tid, _) => new ThreadConvoyStats(tid));
    /// <summary>An array, not a list: looping over none (the usual case) costs nothing per handoff.</summary>
    private IConvoyObserver[] _observers = [];
    /// <summary>Locks found through their wake chains (docs/metrics.md#wake-chains), fed the same events.</summary>
    private readonly WakeChainTracker _chains;

    /// <param name="accounting">
    /// Runs before this analyzer on every event (see <see cref="AnalysisPass"/>): gives the measured region, the
    /// repaired switch-in time of threads whose switch was not logged, and thread → creator (ETW: process) for
    /// inference mode.
    /// </param>
    public ConvoyAnalyzer(ThreadAccounting accounting)
    {
        _accounting = accounting;
        _region = accounting.Region;
        _slots = accounting.Slots;
        _chains = new WakeChainTracker(this, accounting);
    }

    /// <summary>True once any syscall on a lock object was seen: objects are named, not inferred.</summary>
    public bool SawLockSyscalls { get; private set; }
    /// <summary>
    /// Futex handoffs still unconfirmed at the end of the trace (the receiver's next operation on the object was not
    /// seen).
    /// </summary>
    public long UnconfirmedHandoffs { get; private set; }

    /// <summary>Adds a viewer that sees each handoff and counted episode (no effect on the statistics).</summary>
    public void AddObserver(IConvoyObserver observer) => _observers = [.. _observers, observer];

    public IEnumerable<LockObjectStats> Objects => _objects.Values.Select(o => o.Stats);
    public IReadOnlyDictionary<int, ThreadConvoyStats> Threads => _stats.ByTid;

    private sealed class LockThread
    {
        public LockThread(int slot) => Slot = slot;

        /// <summary>This thread's <see cref="ThreadSlots"/> slot.</summary>
        public readonly int Slot;
        public LockOpKind Op;
        public LockObject Obj;
        public long EnterTs;
        public bool OffCpuInOp;
        /// <summary>Voluntarily off CPU (blocked), for inference mode.</summary>
        public bool Blocked;
        public long BlockTs;
        public int BlockWaitReason = -1;
        /// <summary>Woken by a thread operating on the object this thread waits for.</summary>
        public bool Woken;
        public int Giver;
        public int GiverSlot;
        public long WakeTs;
        public bool Ran;
        public long RunTs;
        public long QueuedAt;
        /// <summary>
        /// Futex: the wait returned after a release woke it; whether it got the lock shows in its next operation on the
        /// object.
        /// </summary>
        public bool Pending;
        public Handoff PendingHandoff;
        public int PendingGiverSlot;
        /// <summary>semids this thread holds (semop parity; see docs/metrics.md#handoffs).</summary>
        public readonly SemIdSet SemHeld = new();
        /// <summary>State of <see cref="Obj"/> when last resolved (see <see cref="ObjectOf"/>).</summary>
        public ObjectState? ObjState;
        /// <summary>
        /// The object whose <see cref="LockObjectStats.Waiters"/> this thread was last added to (cleared with them).
        /// </summary>
        public LockObjectStats? WaiterOf;
    }

    private sealed class ObjectState
    {
        public ObjectState(LockObject obj) => Stats = new LockObjectStats(obj);
        public readonly LockObjectStats Stats;
        /// <summary>Longest hold that keeps an episode going (<see cref="MaxHoldNs"/>, or a wake chain's).</summary>
        public long MaxHoldNs = ConvoyAnalyzer.MaxHoldNs;
        public int EpisodeCount;
        public long EpisodeStart;
        public long EpisodeEnd;
        public int LastReceiver;
        public bool FastSinceHandoff;
        /// <summary>
        /// Receivers whose convoy time in the open episode is kept on their own stats
        /// (<see cref="ThreadConvoyStats.EpisodeOf"/> is this object): no hashing per handoff. A receiver already
        /// counting for another object's open episode goes to
        /// <see cref="EpisodeMembers"/> instead; a thread may be in both, its two parts add up.
        /// </summary>
        public readonly List<ThreadConvoyStats> Members = [];
        /// <summary>Receiver → its convoy time in the open episode, credited when the episode qualifies.</summary>
        public readonly Dictionary<int, (long Ns, long Handoffs)> EpisodeMembers = new();

        /// <summary>Forgets the open episode's members (after crediting them, or when it does not qualify).</summary>
        public void ClearMembers()
        {
            foreach (var m in Members)
            {
                m.EpisodeOf = null;
                m.EpisodeNs = m.EpisodeHandoffs = 0;
            }
            Members.Clear();
            EpisodeMembers.Clear();
        }
    }

    public void OnEvent(in KernelEvent e) => PerKindEntryPoints.Dispatch(this, e, _slots);

    // Per-kind entry points (IPerKindAnalyzer), with the slots of the threads the event names.

    public PerKindEvents Wants => PerKindEvents.SyscallsAndScheduling;

    public void OnSyscallEnter(in KernelEvent e, in EventSlots slots)
    {
        if (EventFlags.InInterrupt(e.Flags) || e.CurrentTid <= 0) return;
        OnEnter(e, _threads.At(slots.Pid, e.CurrentTid));
        _chains.OnSyscallEnter(e, slots.Pid);
    }

    public void OnSyscallExit(in KernelEvent e, in EventSlots slots)
    {
        if (EventFlags.InInterrupt(e.Flags) || e.CurrentTid <= 0) return;
        OnExit(e, _threads.At(slots.Pid, e.CurrentTid));
        _chains.OnSyscallExit(e, slots.Pid);
    }

    public void OnWaking(in KernelEvent e, in EventSlots slots)
    {
        OnWaking(e, slots.Pid, slots.Woken);
        _chains.OnWaking(e, slots.Pid, slots.Woken);
    }

    public void OnSwitch(in KernelEvent e, in EventSlots slots)
    {
        OnSwitch(e, slots.Prev, slots.Next);
        _chains.OnSwitch(e, slots.Prev, slots.Next);
    }

    /// <summary>The statistics of a wake-chain lock, made when its first handoff or lost race is seen.</summary>
    internal LockObjectStats ChainObject(in LockObject obj, string name, long maxHoldNs)
    {
        var o = Object(obj);
        o.Stats.Name = name;
        o.MaxHoldNs = maxHoldNs;
        return o.Stats;
    }

    /// <summary>A wake-chain handoff, counted like a futex handoff (episodes use the object's hold limit).</summary>
    internal void ConfirmChain(in Handoff h, int receiverSlot, int giverSlot) => Confirm(h, receiverSlot, giverSlot);


    private ThreadConvoyStats Stats(int tid) => _stats.At(_slots.SlotOf(tid), tid);

    private ThreadConvoyStats StatsAt(int slot, int tid) => _stats.At(slot, tid);

    /// <summary>
    /// The state of the object <paramref name="t"/> operates on, remembered on the thread between its operations.
    /// </summary>
    private ObjectState ObjectOf(LockThread t)
    {
        if (t.ObjState is { } o && o.Stats.Object == t.Obj) return o;
        return t.ObjState = Object(t.Obj);
    }

    private ObjectState Object(in LockObject obj)
    {
        if (_lastObject is { } last && last.Stats.Object == obj) return last;
        if (!_objects.TryGetValue(obj, out var o))
        {
            _objects[obj] = o = new ObjectState(obj);
            if (obj.Kind == LockObjectKind.SysVSemaphore) o.Stats.Acquisitions = 0;
        }
        _lastObject = o;
        return o;
    }

    /// <summary>
    /// The thread's own event shows it running: if its switch-in was not logged, take the repaired start.
    /// </summary>
    private void Running(LockThread t, int tid, long ts)
    {
        if (!t.Woken || t.Ran) return;
        t.Ran = true;
        t.RunTs = _accounting.TryGetRunningSince(tid, out var since) && since >= t.WakeTs && since <= ts ? since : ts;
    }

    private void OnEnter(in KernelEvent e, LockThread t)
    {
        var kind = LockOperation.Classify(e, out var obj);
        // A per-process object whose process the trace does not identify stays keyed by its number alone (as
        // before processes were told apart): threads of one unidentified process must still meet on it.
        obj = _accounting.Lineage.Scoped(obj, e.CurrentTid, t.Slot);
        Running(t, e.CurrentTid, e.Timestamp);
        if (kind != LockOpKind.None)
        {
            SawLockSyscalls = true;
            if (t.Pending && t.PendingHandoff.Object == obj)
            {
                t.Pending = false;
                if (kind == LockOpKind.Wait)
                {
                    // Woken by a release but found the lock taken (another thread barged in): not a handoff.
                    if (_region.Contains(e.Timestamp))
                    {
                        Object(obj).Stats.LostRaces++;
                        Stats(e.CurrentTid).LostRaces++;
                    }
                }
                else Confirm(t.PendingHandoff, t.Slot, t.PendingGiverSlot);
            }
        }
        t.Op = kind;
        t.Obj = obj;
        t.EnterTs = e.Timestamp;
        t.OffCpuInOp = false;
        t.Woken = false;
        t.Ran = false;
    }

    private void OnExit(in KernelEvent e, LockThread t)
    {
        var ts = e.Timestamp;
        Running(t, e.CurrentTid, ts);
        var inRegion = _region.Contains(ts);
        switch (t.Op)
        {
            case LockOpKind.Semop:
                {
                    var o = ObjectOf(t);
                    if (e.SyscallResult != 0) break;
                    var semid = t.Obj.Id;
                    if (t.Woken)
                    {
                        // System V semaphores complete a waiter's operation in the releaser's context: the waiter owns
                        // it on wakeup.
                        t.SemHeld.Add(semid);
                        if (inRegion) o.Stats.Acquisitions++;
                        Confirm(MakeHandoff(t, e.CurrentTid, ts), t.Slot, t.GiverSlot);
                    }
                    else if (t.OffCpuInOp || !t.SemHeld.Contains(semid))
                    {
                        t.SemHeld.Add(semid);
                        if (inRegion)
                        {
                            o.Stats.Acquisitions++;
                            if (!t.OffCpuInOp) o.Stats.FastAcquisitions++;
                        }
                        if (!t.OffCpuInOp) o.FastSinceHandoff = true;
                    }
                    else t.SemHeld.Remove(semid);
                    break;
                }
            case LockOpKind.Wait when t.Woken:
                if (t.Obj.Kind == LockObjectKind.FileDescriptor)
                {
                    if (e.SyscallResult > 0) Confirm(MakeHandoff(t, e.CurrentTid, ts), t.Slot, t.GiverSlot);
                }
                else
                {
                    t.Pending = true;
                    t.PendingHandoff = MakeHandoff(t, e.CurrentTid, ts);
                    t.PendingGiverSlot = t.GiverSlot;
                }
                break;
        }
        if (t.Op != LockOpKind.None && t.OffCpuInOp && inRegion)
        {
            var o = ObjectOf(t).Stats;
            o.BlockingWaits++;
            // Usually already listed: skip the hash when this thread was last added to this very object's set.
            if (t.WaiterOf != o)
            {
                o.Waiters.Add(e.CurrentTid);
                t.WaiterOf = o;
            }
        }
        t.Op = LockOpKind.None;
        t.Woken = false;
        t.Ran = false;
    }

    private static Handoff MakeHandoff(LockThread t, int receiver, long acquiredAt) =>
        new(t.Obj, t.Giver, receiver, t.QueuedAt, t.WakeTs, t.Ran ? t.RunTs : t.WakeTs, acquiredAt);

    private void OnWaking(in KernelEvent e, int pidSlot, int wokenSlot)
    {
        var woken = e.WokenTid;
        if (woken <= 0) return;
        var b = _threads.At(wokenSlot, woken);
        var giver = EventFlags.InInterrupt(e.Flags) || e.CurrentTid <= 0 ? 0 : e.CurrentTid;
        if (b.Op is LockOpKind.Wait or LockOpKind.Semop)
        {
            if (giver > 0 && _threads.Find(pidSlot) is { } a && a.Op is LockOpKind.Wake or LockOpKind.Semop
                && a.Obj == b.Obj)
                Woke(b, giver, pidSlot, e.Timestamp, b.EnterTs);
            return;
        }
        // Inference: no syscall names what the thread waits for.
        if (!SawLockSyscalls && b.Op == LockOpKind.None && b.Blocked && giver > 0
            && LockOperation.IsLockWaitReason(b.BlockWaitReason))
        {
            var process = _accounting.Lineage.ProcessOf(woken);
            if (process == _accounting.Lineage.ProcessOf(giver))
            {
                b.Obj = new LockObject(LockObjectKind.Inferred, process);
                Woke(b, giver, pidSlot, e.Timestamp, b.BlockTs);
            }
        }
    }

    /// <param name="giverSlot">The giver logged the waking: the event's <see cref="EventSlots.Pid"/>.</param>
    private static void Woke(LockThread b, int giver, int giverSlot, long ts, long queuedAt)
    {
        b.Woken = true;
        b.Giver = giver;
        b.GiverSlot = giverSlot;
        b.WakeTs = ts;
        b.QueuedAt = queuedAt;
        // Woken before it got off the CPU: it is already running.
        b.Ran = !b.OffCpuInOp && !b.Blocked;
        b.RunTs = ts;
    }

    private void OnSwitch(in KernelEvent e, int prevSlot, int nextSlot)
    {
        var t = e.Timestamp;
        if (e.PrevTid > 0)
        {
            var p = _threads.At(prevSlot, e.PrevTid);
            var preempted = TaskState.IsPreempted(e.PrevState);
            if (p.Op != LockOpKind.None && !preempted) p.OffCpuInOp = true;
            p.Blocked = !preempted;
            p.BlockTs = t;
            p.BlockWaitReason = e.PrevWaitReason;
            if (!preempted && p.Op == LockOpKind.None) p.Woken = false;
        }
        if (e.NextTid > 0 && _threads.Find(nextSlot) is { } n)
        {
            n.Blocked = false;
            if (n.Woken && !n.Ran)
            {
                n.Ran = true;
                n.RunTs = t;
                if (n.Op == LockOpKind.None && n.Obj.Kind == LockObjectKind.Inferred)
                {
                    n.Woken = false;
                    Confirm(MakeHandoff(n, e.NextTid, t), n.Slot, n.GiverSlot);
                }
            }
        }
    }

    /// <param name="receiverSlot">Slot of <see cref="Handoff.Receiver"/>.</param>
    /// <param name="giverSlot">Slot of <see cref="Handoff.Giver"/>.</param>
    private void Confirm(in Handoff h, int receiverSlot, int giverSlot)
    {
        var o = Object(h.Object);
        var inRegion = _region.Contains(h.WokenAt);
        foreach (var observer in _observers) observer.OnHandoff(h, inRegion);
        ThreadConvoyStats? r = null;
        if (inRegion)
        {
            var s = o.Stats;
            s.Handoffs++;
            var gap = h.GapNs;
            var queueWait = h.QueueWaitNs;
            s.HandoffGap.Add(gap);
            s.QueueWait.Add(queueWait);
            r = StatsAt(receiverSlot, h.Receiver);
            var g = StatsAt(giverSlot, h.Giver);
            // Giver first, then receiver (the set's order); skipped when the thread was last added to this set.
            if (g.ParticipantOf != s)
            {
                s.Participants.Add(h.Giver);
                g.ParticipantOf = s;
            }
            if (r.ParticipantOf != s)
            {
                s.Participants.Add(h.Receiver);
                r.ParticipantOf = s;
            }
            // A wake chain is a lock only when its handoffs chain into counted episodes (docs/metrics.md#wake-chains):
            // its threads get only their time in those episodes, not a lock wait per handoff.
            if (h.Object.Kind != LockObjectKind.WakeChain)
            {
                r.HandoffsReceived++;
                r.QueueWait.Add(queueWait);
                r.ReadyLatency.Add(gap);
                r.ReceivedFromCounts.Add(h.Giver);
                g.HandoffsGiven++;
                g.GivenToCounts.Add(h.Receiver);
            }
        }

        if (o.EpisodeCount > 0 && h.Giver == o.LastReceiver && !o.FastSinceHandoff
            && h.WokenAt - o.EpisodeEnd <= o.MaxHoldNs)
        {
            o.EpisodeCount++;
            o.EpisodeEnd = h.RunningAt;
        }
        else
        {
            CloseEpisode(o);
            o.EpisodeCount = 1;
            o.EpisodeStart = h.WokenAt;
            o.EpisodeEnd = h.RunningAt;
        }
        o.LastReceiver = h.Receiver;
        o.FastSinceHandoff = false;
        if (r is not null)
        {
            var ns = _region.Overlap(h.QueuedAt, h.RunningAt);
            if (r.EpisodeOf == o.Stats)
            {
                r.EpisodeNs += ns;
                r.EpisodeHandoffs++;
            }
            else if (r.EpisodeOf is null)
            {
                r.EpisodeOf = o.Stats;
                r.EpisodeNs = ns;
                r.EpisodeHandoffs = 1;
                o.Members.Add(r);
            }
            else
            {
                ref var m = ref CollectionsMarshal.GetValueRefOrAddDefault(o.EpisodeMembers, h.Receiver, out _);
                m = (m.Ns + ns, m.Handoffs + 1);
            }
        }
    }

    private void CloseEpisode(ObjectState o)
    {
        if (o.EpisodeCount >= MinEpisodeHandoffs)
        {
            var s = o.Stats;
            var ns = _region.Overlap(o.EpisodeStart, o.EpisodeEnd);
            if (ns > 0 || _region.Contains(o.EpisodeStart))
            {
                s.Episodes++;
                s.ConvoyNs += ns;
                s.LongestChain = Math.Max(s.LongestChain, o.EpisodeCount);
                foreach (var observer in _observers)
                    observer.OnEpisode(new ConvoyEpisode(s.Object, o.EpisodeStart, o.EpisodeEnd, o.EpisodeCount));
                foreach (var st in o.Members)
                {
                    st.TimeInConvoyNs += st.EpisodeNs;
                    st.HandoffsReceivedInConvoys += st.EpisodeHandoffs;
                    s.HandoffsInConvoys += st.EpisodeHandoffs;
                }
                foreach (var (tid, m) in o.EpisodeMembers)
                {
                    var st = Stats(tid);
                    st.TimeInConvoyNs += m.Ns;
                    st.HandoffsReceivedInConvoys += m.Handoffs;
                    s.HandoffsInConvoys += m.Handoffs;
                }
            }
        }
        o.EpisodeCount = 0;
        o.ClearMembers();
    }

    public void OnRegionBegin()
    {
        foreach (var o in _objects.Values)
        {
            o.Stats.Reset();
            o.EpisodeCount = 0;
            o.ClearMembers();
        }
        foreach (var s in _stats.ByTid.Values) s.Reset();
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
        foreach (var o in _objects.Values) CloseEpisode(o);
    }
}
