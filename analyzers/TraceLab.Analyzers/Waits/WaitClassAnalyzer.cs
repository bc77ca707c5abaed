using TraceLab.Analyzers.Locks;
using TraceLab.Core;

namespace TraceLab.Analyzers.Waits;

/// <summary>
/// Classifies every blocked interval of every thread (a switch-out in a sleeping state until the wakeup that ends
/// it, the same interval as <see cref="ThreadStats.WaitNs"/>) by what it waited for, from the syscall open at the
/// switch-out, the task state, the wakeup's source and the syscall's result (docs/metrics.md#wait-classes); where the
/// trace has blocking stacks, <see cref="ApplyStackTags"/> then moves the intervals a stack tag names.
/// One streaming pass; memory grows with threads, futex objects and (waiter, object, waker) triples (times their
/// blocking stacks, where the trace has them), never with the trace's length.
/// </summary>
public sealed class WaitClassAnalyzer : IPerKindAnalyzer
{
    /// <summary>The analysis `--analysis waits` selects.</summary>
    public static readonly AnalysisDefinition Analysis = new("waits", 10, c => new WaitClassAnalyzer(c.Accounting));

    private readonly ThreadAccounting _accounting;
    private readonly MeasuredRegion _region;
    private readonly ThreadSlots _slots;
    private SlotTable<WaitThread> _threads = new(static (tid, _) => new WaitThread(tid));
    private SlotTable<ThreadWaitClassStats> _stats = new(static (tid, _) => new ThreadWaitClassStats(tid));
    /// <summary>(object, tid) of every thread seen blocked in a futex wait on the object.</summary>
    private readonly HashSet<(LockObject, int)> _waitersOf = [];
    /// <summary>Threads seen blocked in a futex wait on a shared (process-shared) futex.</summary>
    private readonly HashSet<int> _sharedWaiters = [];
    // Futex words some thread waited on expecting glibc's contended-mutex value (WaitClassifier.ContendedMutexValue).
    private readonly HashSet<LockObject> _mutexWords = [];
    /// <summary>
    /// Futex waits ended by a thread, settled at the end: (waiter, object, waker, source, blocking stack) → time,
    /// waits.
    /// </summary>
    private readonly Dictionary<(int Tid, LockObject Obj, int Waker, WakeSource Source, int Stack),
        (long Ns, long Waits)> _futexWaits = new();
    /// <summary>Futex waits that timed out, settled at the end: (waiter, object, source, stack) → time and waits.
    /// </summary>
    private readonly Dictionary<(int Tid, LockObject Obj, WakeSource Source, int Stack), (long Ns, long Waits)>
        _timedOut = new();
    /// <summary>
    /// Classified intervals whose switch-out carried a stack: (thread, stack, object, class, source) → time, waits;
    /// what <see cref="ApplyStackTags"/> may move to another class once the stacks are named.
    /// </summary>
    private readonly Dictionary<StackedWaitKey, (long Ns, long Waits)> _stacked = new();
    private readonly Dictionary<LockObject, long[]> _objectNs = new();
    private bool _completed;
    /// <summary>The first switch since the region began: with the end, how long releases were counted over.</summary>
    private long _firstSwitch = long.MinValue;

    /// <summary>Makes the analyzer over a pass's accounting (it runs before this analyzer on every event).</summary>
    public WaitClassAnalyzer(ThreadAccounting accounting)
    {
        _accounting = accounting;
        _region = accounting.Region;
        _slots = accounting.Slots;
    }

    private sealed class WaitThread
    {
        public WaitThread(int tid) => Tid = tid;

        public readonly int Tid;
        /// <summary>In a syscall (entry seen, exit not yet): the call's number, wait kind and lock object.</summary>
        public bool InCall;
        public int Nr;
        public WaitCall Call;
        public LockObject Obj;
        /// <summary>Switched out voluntarily and not yet back: the wait as it began.</summary>
        public bool Blocked;
        public BlockedWait Block = new() { Reason = -1 };
        /// <summary>A waking logged while it was not blocked, since its last switch: who woke it.</summary>
        public bool HasEarly;
        public Waking Early;
        /// <summary>
        /// Blocked after such a waking (ThreadAccounting.IsWokenBeforeSwitchOut decides): switched in with no other
        /// waking first, that waking ended the wait at once.
        /// </summary>
        public bool WokenEarly;
        /// <summary>A finished interval whose class waits for the syscall's result.</summary>
        public bool Pending;
        public FinishedWait Finished;
        public ThreadWaitClassStats? Stats;
    }

    /// <summary>A wait as it began: the switch-out's time, state, reason, call, object and stack.</summary>
    private struct BlockedWait
    {
        public long Ts;
        public bool Uninterruptible;
        public int Reason;
        public WaitCall Call;
        public LockObject Obj;
        /// <summary>The switch-out's stack (0: none recorded).</summary>
        public int Stack;
    }

    /// <summary>Who ended a wait: the waking's source and the waking thread (0: none).</summary>
    private readonly record struct Waking(WakeSource Source, int Waker);

    /// <summary>A wait's interval once it ended: its time in the region, whether it counts, and who ended it.</summary>
    private readonly record struct FinishedWait(long Ns, long Waits, Waking By);

    /// <summary>Any syscall entry with its number was in the trace: without them every Linux wait is unknown.</summary>
    public bool SawSyscalls { get; private set; }

    /// <summary>Per thread that blocked in the region: its blocked time by class and by wake source.</summary>
    public IReadOnlyDictionary<int, ThreadWaitClassStats> Threads => _stats.ByTid;

    /// <summary>
    /// Blocked time of futex and semaphore waits per object, by class (indexed by <see cref="WaitClass"/>): an
    /// object whose waits are all <see cref="WaitClass.Condition"/> is an event, not a lock.
    /// </summary>
    public IReadOnlyDictionary<LockObject, long[]> Objects => _objectNs;

    /// <summary>
    /// True when the object's classified waits were mostly (by time) something other than a lock; for a wake chain,
    /// when its waiters' blocked time was (docs/metrics.md#wake-chains).
    /// </summary>
    public bool IsNotALock(LockObjectStats stats)
    {
        if (stats.Object.Kind != LockObjectKind.WakeChain) return IsNotALock(stats.Object);
        // A wake chain is the waiters' own parking places released one after another; when the waiters' blocked time
        // is mostly not lock waits (idle pool workers that wake one another), it is not a queue for a lock.
        long lockNs = 0, totalNs = 0;
        foreach (var tid in stats.Waiters)
        {
            if (!Threads.TryGetValue(tid, out var t)) continue;
            lockNs += t.Ns(WaitClass.Lock);
            totalNs += t.TotalNs;
        }
        return totalNs > 0 && lockNs * 2 < totalNs;
    }

    /// <summary>True when the object's classified waits were mostly (by time) something other than a lock.</summary>
    public bool IsNotALock(LockObject obj) =>
        _objectNs.TryGetValue(obj, out var ns) && ns[(int)WaitClass.Lock] * 2 < ns.Sum();

    /// <inheritdoc/>
    public PerKindEvents Wants => PerKindEvents.SyscallsAndScheduling;

    /// <inheritdoc/>
    public void OnEvent(in KernelEvent e) => PerKindEntryPoints.Dispatch(this, e, _slots);

    /// <inheritdoc/>
    public void OnSyscallEnter(in KernelEvent e, in EventSlots slots)
    {
        if (e.CurrentTid <= 0 || EventFlags.InInterrupt(e.Flags) || !e.HasSyscallNumber) return;
        SawSyscalls = true;
        var t = _threads.At(slots.Pid, e.CurrentTid);
        if (t.Blocked) BackOnCpu(t, e.Timestamp);
        if (t.Pending) Settle(t, false, 0);
        t.InCall = true;
        t.Nr = e.SyscallNumber;
        t.Call = WaitCalls.Of(t.Nr, e.SyscallArg1);
        t.Obj = default;
        if (t.Call is WaitCall.FutexWait or WaitCall.FutexLockPi or WaitCall.Semop
            && LockOperation.Classify(e, out var obj) != LockOpKind.None)
        {
            t.Obj = _accounting.Lineage.Scoped(obj, e.CurrentTid, slots.Pid);
            if (t.Call == WaitCall.FutexWait && e.SyscallArg2 == WaitClassifier.ContendedMutexValue)
                _mutexWords.Add(t.Obj);
        }
    }

    /// <inheritdoc/>
    public void OnSyscallExit(in KernelEvent e, in EventSlots slots)
    {
        if (e.CurrentTid <= 0 || EventFlags.InInterrupt(e.Flags)) return;
        if (_threads.Find(slots.Pid) is not { } t) return;
        if (t.Blocked) BackOnCpu(t, e.Timestamp);
        if (t.Pending) Settle(t, t.InCall, e.SyscallResult);
        t.InCall = false;
    }

    /// <inheritdoc/>
    public void OnSwitch(in KernelEvent e, in EventSlots slots)
    {
        var ts = e.Timestamp;
        if (_firstSwitch == long.MinValue) _firstSwitch = ts;
        var prev = e.PrevTid;
        if (prev > 0 && !TaskState.IsPreempted(e.PrevState)
            && (e.PrevState & (TaskState.ExitDead | TaskState.ExitZombie)) == 0)
        {
            var t = _threads.At(slots.Prev, prev);
            // Still blocked: it ran again without a logged switch-in (a broken switch chain), and this switch-out is
            // the evidence that it did: the wait ended here at the latest, as the wait-for graph ends it.
            if (t.Blocked) BackOnCpu(t, ts);
            if (t.Pending) Settle(t, false, 0);
            t.Blocked = true;
            t.Block.Ts = ts;
            t.Block.Uninterruptible = (e.PrevState & TaskState.Uninterruptible) != 0;
            t.Block.Reason = e.HasPrevWaitReason ? e.PrevWaitReason : -1;
            t.Block.Call = t.InCall ? t.Call : WaitCall.None;
            t.Block.Obj = t.InCall ? t.Obj : default;
            t.Block.Stack = e.StackId;
            t.WokenEarly = t.HasEarly && _accounting.IsWokenBeforeSwitchOut(slots.Prev);
            t.HasEarly = false;
            if (t.Block.Call == WaitCall.FutexWait)
            {
                _waitersOf.Add((t.Block.Obj, prev));
                if (t.Block.Obj.Process == 0) _sharedWaiters.Add(prev);
            }
        }
        if (e.NextTid > 0 && _threads.Find(slots.Next) is { } n)
        {
            if (n.Blocked) BackOnCpu(n, ts);
            n.HasEarly = false;
        }
    }

    /// <summary>
    /// Running again with no waking logged since its switch-out: a waking logged while it still ran ended the wait
    /// at its start (0 ns); without one, the wait lasted until now and its waker is unknown.
    /// </summary>
    private void BackOnCpu(WaitThread t, long ts)
    {
        if (t.WokenEarly) EndBlocked(t, t.Block.Ts, t.Early);
        else EndBlocked(t, ts, new(WakeSource.None, 0));
        t.WokenEarly = false;
    }

    /// <inheritdoc/>
    public void OnWaking(in KernelEvent e, in EventSlots slots)
    {
        if (e.WokenTid <= 0) return;
        var t = _threads.At(slots.Woken, e.WokenTid);
        var by = SourceOf(e, slots.Pid, t.Tid, slots.Woken);
        if (!t.Blocked)
        {
            // Still on its CPU: this may be the waking of the wait it is about to switch out for (OnSwitch).
            t.HasEarly = true;
            t.Early = by;
            return;
        }
        t.WokenEarly = false;
        EndBlocked(t, e.Timestamp, by);
    }

    private Waking SourceOf(in KernelEvent e, int wakerSlot, int woken, int wokenSlot)
    {
        if ((e.Flags & (EventFlags.HardIrq | EventFlags.Nmi)) != 0) return new(WakeSource.HardIrq, 0);
        if ((e.Flags & EventFlags.SoftIrq) != 0) return new(WakeSource.SoftIrq, 0);
        if (e.CurrentTid <= 0) return new(WakeSource.HardIrq, 0); // the idle task: an interrupt woke the CPU
        if (_threads.Find(wakerSlot) is { InCall: true } w && WaitCalls.SendsSignal(w.Nr))
            return new(WakeSource.Signal, e.CurrentTid);
        var lineage = _accounting.Lineage;
        return new(lineage.ProcessOf(e.CurrentTid, wakerSlot) == lineage.ProcessOf(woken, wokenSlot)
            ? WakeSource.PeerThread : WakeSource.OtherProcess, e.CurrentTid);
    }

    private void EndBlocked(WaitThread t, long end, Waking by)
    {
        t.Blocked = false;
        var ns = _region.Overlap(t.Block.Ts, end);
        t.Pending = true;
        // A wait its waking ended before it left the CPU is 0 ns long but still a wait.
        t.Finished = new(ns, ns > 0 || (end == t.Block.Ts && _region.Contains(end)) ? 1 : 0, by);
        // Only futex and semaphore waits read the syscall's result; the rest are settled now.
        if (!t.InCall || t.Block.Call is not (WaitCall.FutexWait or WaitCall.Semop)) Settle(t, false, 0);
    }

    private void Settle(WaitThread t, bool hasResult, long result)
    {
        t.Pending = false;
        var (pendingNs, pendingWaits, by) = t.Finished;
        if (pendingNs == 0 && pendingWaits == 0) return;
        var b = t.Block;
        var facts = new WaitFacts(b.Call, b.Uninterruptible, by.Source, hasResult, result, b.Reason);
        var c = WaitClassifier.Classify(facts, out var needsObject);
        if (needsObject && WaitClassifier.IsTimedOut(facts))
        {
            var timed = (t.Tid, b.Obj, by.Source, b.Stack);
            var (tns, twaits) = _timedOut.GetValueOrDefault(timed);
            _timedOut[timed] = (tns + pendingNs, twaits + pendingWaits);
            return;
        }
        if (needsObject)
        {
            var key = (t.Tid, b.Obj, by.Waker, by.Source, b.Stack);
            var (ns, waits) = _futexWaits.GetValueOrDefault(key);
            _futexWaits[key] = (ns + pendingNs, waits + pendingWaits);
            return;
        }
        Add(t, c, by.Source, pendingNs, pendingWaits);
    }

    private void Add(WaitThread t, WaitClass c, WakeSource source, long ns, long waits)
    {
        (t.Stats ??= _stats.At(_slots.SlotOf(t.Tid), t.Tid)).Add(c, source, ns, waits);
        var isObject = t.Block.Call is WaitCall.FutexWait or WaitCall.FutexLockPi or WaitCall.Semop;
        if (isObject) AddObject(t.Block.Obj, c, ns);
        if (t.Block.Stack != 0) AddStacked(new(t.Tid, t.Block.Stack, isObject, t.Block.Obj, c, source), ns, waits);
    }

    private void AddStacked(StackedWaitKey key, long ns, long waits)
    {
        var (n, w) = _stacked.GetValueOrDefault(key);
        _stacked[key] = (n + ns, w + waits);
    }

    private void AddObject(LockObject obj, WaitClass c, long ns)
    {
        if (!_objectNs.TryGetValue(obj, out var a)) _objectNs[obj] = a = new long[WaitClasses.Count];
        a[(int)c] += ns;
    }

    /// <inheritdoc/>
    public void OnRegionBegin()
    {
        foreach (var (_, s) in _stats.InOrder) s.Reset();
        _futexWaits.Clear();
        _timedOut.Clear();
        _objectNs.Clear();
        _stacked.Clear();
        _firstSwitch = long.MinValue;
    }

    /// <inheritdoc/>
    public void Complete(long end)
    {
        if (_completed) return;
        _completed = true;
        foreach (var (_, t) in _threads.InOrder)
        {
            if (t.Blocked) BackOnCpu(t, end);
            if (t.Pending) Settle(t, false, 0);
        }
        // An object only one thread ever blocked on, private to its process, is that thread's own parking place
        // (a per-transaction or per-thread condition variable); who released whom out of such places.
        var waiters = new Dictionary<LockObject, int>();
        foreach (var (obj, _) in _waitersOf) waiters[obj] = waiters.GetValueOrDefault(obj) + 1;
        bool Own(LockObject obj) => obj.Process != 0 && waiters.GetValueOrDefault(obj) == 1;
        var released = new Dictionary<(int Waiter, int Waker), long>();
        var wakers = new Dictionary<int, HashSet<int>>();
        // One of several peers that release each other: released by two or more threads. A coordinator and its
        // workers release each other too (work handed out, completion reported), but each worker only by the
        // coordinator.
        bool Peers(int tid) => wakers.TryGetValue(tid, out var set) && set.Count >= 2;
        // Objects the threads take turns holding: a thread that waits on it released a wait on it.
        var inTurns = new HashSet<LockObject>(_mutexWords);
        foreach (var ((tid, obj, waker, _, _), (_, waits)) in _futexWaits)
        {
            if (Own(obj))
            {
                released[(tid, waker)] = released.GetValueOrDefault((tid, waker)) + waits;
                if (!wakers.TryGetValue(tid, out var set)) wakers[tid] = set = [];
                set.Add(waker);
            }
            if (_waitersOf.Contains((obj, waker))) inTurns.Add(obj);
        }
        // Turns taken again and again: each of the two released the other often (WaitClassifier.MutualReleases).
        var seconds = _firstSwitch == long.MinValue ? 0 : Math.Max(0, end - _firstSwitch) / 1e9;
        var often = WaitClassifier.MutualReleases(seconds);
        bool InTurn(int tid, int waker) =>
            released.GetValueOrDefault((tid, waker)) >= often && released.GetValueOrDefault((waker, tid)) >= often
            && Peers(tid) && Peers(waker);
        foreach (var ((tid, obj, waker, source, stack), (ns, waits)) in _futexWaits.OrderBy(p => p.Key.Tid))
        {
            var c = WaitClassifier.SettleFutex(_waitersOf.Contains((obj, waker)), obj.Process == 0,
                _sharedWaiters.Contains(waker), _mutexWords.Contains(obj),
                Own(obj) && InTurn(tid, waker));
            _stats.At(_slots.SlotOf(tid), tid).Add(c, source, ns, waits);
            AddObject(obj, c, ns);
            if (stack != 0) AddStacked(new(tid, stack, true, obj, c, source), ns, waits);
        }
        foreach (var ((tid, obj, source, stack), (ns, waits)) in _timedOut.OrderBy(p => p.Key.Tid))
        {
            var c = WaitClassifier.SettleTimedOut(inTurns.Contains(obj));
            _stats.At(_slots.SlotOf(tid), tid).Add(c, source, ns, waits);
            AddObject(obj, c, ns);
            if (stack != 0) AddStacked(new(tid, stack, true, obj, c, source), ns, waits);
        }
    }

    /// <summary>
    /// Moves every interval whose blocking stack a tag names (<paramref name="classOf"/>: the class and the tag's
    /// pattern, or null to keep the trace's class) into that class, in the threads' and the objects' figures
    /// (docs/metrics.md#wait-stack-tags); once, after <see cref="Complete"/>. Returns what moved.
    /// </summary>
    public WaitStackOutcome ApplyStackTags(Func<int, (WaitClass Class, string Tag)?> classOf)
    {
        ArgumentNullException.ThrowIfNull(classOf);
        if (StackOutcome is not null) throw new InvalidOperationException("stack tags were applied already");
        var figures = new Dictionary<int, WaitStackFigures>();
        var moves = new Dictionary<(int Tid, WaitClass From, WaitClass To, string Tag), (long Ns, long Waits)>();
        foreach (var (key, (ns, waits)) in _stacked)
        {
            var tagged = classOf(key.Stack);
            var f = figures.GetValueOrDefault(key.Tid);
            figures[key.Tid] = new(f.WithStackNs + ns, f.WithStackWaits + waits,
                f.TaggedNs + (tagged is null ? 0 : ns));
            if (tagged is not { } to || to.Class == key.Class) continue;
            var stats = _stats.At(_slots.SlotOf(key.Tid), key.Tid);
            stats.Add(key.Class, key.Source, -ns, -waits);
            stats.Add(to.Class, key.Source, ns, waits);
            if (key.IsObject)
            {
                AddObject(key.Obj, key.Class, -ns);
                AddObject(key.Obj, to.Class, ns);
            }
            var move = (key.Tid, key.Class, to.Class, to.Tag);
            var (mns, mwaits) = moves.GetValueOrDefault(move);
            moves[move] = (mns + ns, mwaits + waits);
        }
        return StackOutcome = new WaitStackOutcome(figures,
            moves.Select(m => new WaitStackMove(m.Key.Tid, m.Key.From, m.Key.To, m.Key.Tag, m.Value.Ns, m.Value.Waits))
                .OrderBy(m => m.Tid).ThenBy(m => m.From).ThenBy(m => m.To).ThenBy(m => m.Tag, StringComparer.Ordinal)
                .ToList());
    }

    /// <summary>What <see cref="ApplyStackTags"/> did; null when the trace's stacks were not applied.</summary>
    public WaitStackOutcome? StackOutcome { get; private set; }

    /// <summary>One classified figure of intervals with a blocking stack.</summary>
    private readonly record struct StackedWaitKey(int Tid, int Stack, bool IsObject, LockObject Obj, WaitClass Class,
        WakeSource Source);
}
