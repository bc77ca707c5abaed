using System.Runtime.CompilerServices;
using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// Per-thread scheduler accounting in one streaming pass: run, ready and wait time, switches, migrations, wakeups
/// and ready latency (docs/metrics.md#threads). Robust to broken per-CPU switch chains: every event names the thread
/// running on its CPU (common_pid), so when that is not the thread the last switch put there, a switch was not logged;
/// the
/// chain is repaired at that point (start estimated, see <see cref="Repair"/>) and counted in
/// <see cref="ChainBreaks"/>. Memory grows with the number of threads and CPUs, never with the number of events.
/// </summary>
// The slots of each event live in a stack struct passed by reference to every analyzer: always written before they
// are read, so zeroing them in every call's prolog (what the IL's localsinit asks for) is wasted work per event.
[SkipLocalsInit]
public sealed class ThreadAccounting : IKernelEventSink
{
    private const int Unknown = -1;

    /// <summary>
    /// A CPU whose current task is not known (see <see cref="ISchedulingObserver.OnCpuTaskChanged"/>).
    /// </summary>
    public const int UnknownTask = Unknown;

    private SlotTable<AccountedThread> _states = new(static (_, _) => new AccountedThread());
    private SlotTable<ThreadStats> _stats = new(static (tid, _) => new ThreadStats(tid));
    private AccountedCpu[] _cpus = [];
    private readonly SchedulingObservers _observers = new();

    public MeasuredRegion Region { get; } = new();

    /// <summary>
    /// The reader's thread names, when the session has them: a wake chain's program is its processes' name
    /// (docs/metrics.md#wake-chains).
    /// </summary>
    public ThreadTable? Names { get; init; }

    /// <summary>
    /// tid → dense slot, shared by every analyzer of the pass so each indexes its per-thread arrays by slot.
    /// </summary>
    public ThreadSlots Slots { get; } = new();
    public long ChainBreaks { get; private set; }
    public long ChainBreaksInRegion { get; private set; }
    public long SwitchEvents { get; private set; }
    public long FirstTimestamp { get; private set; } = long.MaxValue;
    public long LastTimestamp { get; private set; } = long.MinValue;

    /// <summary>
    /// Which process each thread belongs to (the one place that answers it): fed by this pass's creation, exec, exit
    /// and marker events.
    /// </summary>
    public ProcessLineage Lineage { get; }

    public ThreadAccounting() => Lineage = new ProcessLineage(Region);

    public IReadOnlyDictionary<int, ThreadStats> Threads => _stats.ByTid;

    /// <summary>
    /// The pass's one stage of type <typeparamref name="T"/>, made by <paramref name="create"/> at the first request
    /// and the same instance after: state several analyzers of one pass build on (such as the lock-operation tracker)
    /// without any of them owning it. <see cref="AnalysisPass"/> feeds each stage every event before its analyzers;
    /// request it while making the analyzers, before the pass is built.
    /// </summary>
    public T Stage<T>(Func<ThreadAccounting, T> create) where T : class, IPerKindAnalyzer
    {
        foreach (var stage in _stages)
            if (stage is T existing) return existing;
        var made = create(this);
        _stages = [.. _stages, made];
        return made;
    }

    /// <summary>The stages made so far (<see cref="Stage{T}"/>), in the order they were first requested.</summary>
    internal IReadOnlyList<IPerKindAnalyzer> Stages => _stages;

    private IPerKindAnalyzer[] _stages = [];

    /// <summary>Adds an observer of run intervals and CPU occupancy; subscribe before the first event.</summary>
    public void Subscribe(ISchedulingObserver observer) => _observers.Add(observer);

    /// <summary>
    /// Kinds whose only effect here is evidence that their thread runs (<see cref="Evidence"/>): syscalls, exec and
    /// unmodelled events, about three quarters of a typical trace. Bit per <see cref="KernelEventKind"/> value.
    /// </summary>
    private const int EvidenceOnlyKinds = (1 << (int)KernelEventKind.Other) | (1 << (int)KernelEventKind.Exec)
        | (1 << (int)KernelEventKind.SyscallEnter) | (1 << (int)KernelEventKind.SyscallExit);

    public void OnEvent(in KernelEvent e)
    {
        if (((EvidenceOnlyKinds >> (int)e.Kind) & 1) != 0) OnEvidenceOnly(e, out _);
        else OnModelled(e);
    }

    /// <summary>Widens the trace's time span to <paramref name="t"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void See(long t)
    {
        if (t < FirstTimestamp) FirstTimestamp = t;
        if (t > LastTimestamp) LastTimestamp = t;
    }

    /// <summary>
    /// <see cref="OnEvent"/> for an evidence-only kind (syscalls, exec, unmodelled events; <see cref="AnalysisPass"/>
    /// has already switched on the kind). True when the event came from the thread its CPU was already known to run
    /// (nothing changed): then an event was handled on that CPU before (<see cref="UnknownTask"/> never takes this
    /// path), which is what <see cref="AnalysisPass"/> relies on to skip per-CPU bookkeeping. Either way
    /// <paramref name="slots"/> holds the logging thread's slot.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool OnEvidenceOnly(in KernelEvent e, out EventSlots slots)
    {
        var t = e.Timestamp;
        if (e.Kind == KernelEventKind.Exec) Lineage.OnExec(e.CurrentTid);
        See(t);
        // Fast path: an evidence-only event of the thread this CPU already runs moves its last-seen time, nothing else.
        var cpus = _cpus;
        var c = e.Cpu;
        if ((uint)c < (uint)cpus.Length)
        {
            ref var known = ref cpus[c];
            if (known.Current == e.CurrentTid && e.CurrentTid != Unknown)
            {
                slots = StillRunning(ref known, t);
                return true;
            }
            // An unmodelled event naming another thread than the switch chain's is no proof the chain broke: the
            // kernel logs some inside the context switch after sched_switch with the previous task's pid
            // (tlb_flush, x86_fpu_regs_deactivated, write_msr), and a co-kernel's threads (Xenomai/Cobalt) run
            // outside Linux's scheduler. Such an event only tells who runs on a CPU nothing is known of yet.
            if (e.Kind == KernelEventKind.Other && known.Current != Unknown)
            {
                slots = EventSlots.OfPid(Slots.SlotOfThread(e.CurrentTid));
                return true;
            }
        }
        slots = OnEvidenceSlow(e, t);
        return false;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private EventSlots OnEvidenceSlow(in KernelEvent e, long t) => OnEventSlow(e, t);

    /// <summary>
    /// <see cref="OnEvidenceOnly"/> for a syscall not yet through <see cref="ThreadInstanceMap.Rewrite"/>, when it is
    /// certain to need no rewriting: logged by the thread its CPU already runs, whose tid has stood for it since it
    /// was switched in (<see cref="AccountedCpu.TidStands"/>). Then it does what <see cref="OnEvidenceOnly"/>'s fast
    /// path does and returns true; otherwise it changes nothing and returns false. Why: most events are syscalls of the
    /// running thread, and this one compare settles both questions, where a separate look at the event's tids in
    /// front of the pass cost about 3 % of the analysis (docs/performance.md, "tid-reuse-check").
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool TryEvidenceOfCurrent(in KernelEvent e, out EventSlots slots)
    {
        var cpus = _cpus;
        var c = e.Cpu;
        if ((uint)c < (uint)cpus.Length)
        {
            ref var known = ref cpus[c];
            if (known.Current == e.CurrentTid && known.TidStands)
            {
                var t = e.Timestamp;
                See(t);
                slots = StillRunning(ref known, t);
                return true;
            }
        }
        slots = default;
        return false;
    }

    /// <summary>An event of the thread <paramref name="known"/>'s CPU already runs: it moves that thread's last-seen
    /// time, nothing else (the fast path of <see cref="OnEvidenceOnly"/> and
    /// <see cref="TryEvidenceOfCurrent"/>).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static EventSlots StillRunning(ref AccountedCpu known, long t)
    {
        known.LastEvidence = t;
        return EventSlots.OfPid(known.CurrentSlot);
    }

    /// <summary>
    /// A tid now stands for another thread than before (<see cref="ThreadInstanceMap.Epoch"/> moved): no CPU's
    /// current thread is vouched for by its tid any more, until its next switch-in.
    /// </summary>
    internal void ForgetCurrentTids()
    {
        for (var i = 0; i < _cpus.Length; i++) _cpus[i].TidStands = false;
    }

    /// <summary><see cref="OnEvent"/> for a switch (<see cref="AnalysisPass"/> has switched on the kind).</summary>
    internal EventSlots OnSwitchEvent(in KernelEvent e)
    {
        var t = e.Timestamp;
        See(t);
        return OnSwitch(ref Cpu(e.Cpu), e, t);
    }

    /// <summary><see cref="OnEvent"/> for a waking (<see cref="AnalysisPass"/> has switched on the kind).</summary>
    internal EventSlots OnWakingEvent(in KernelEvent e)
    {
        var t = e.Timestamp;
        See(t);
        var pidSlot = LoggedBy(ref Cpu(e.Cpu), e, t);
        return OnWaking(e, t, pidSlot, counted: true);
    }

    /// <summary>
    /// <see cref="OnEvent"/> for a kind that is not evidence-only (switch, wakeups, migrate, fork, exit, marker).
    /// </summary>
    internal EventSlots OnModelled(in KernelEvent e)
    {
        var t = e.Timestamp;
        See(t);
        return OnEventSlow(e, t);
    }

    /// <summary>The event's logging thread runs on its CPU (<see cref="Evidence"/>); returns its slot.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int LoggedBy(ref AccountedCpu cpu, in KernelEvent e, long t)
    {
        Evidence(ref cpu, e.Cpu, e.CurrentTid, t);
        return cpu.CurrentSlot;
    }

    private EventSlots OnEventSlow(in KernelEvent e, long t)
    {
        ref var cpu = ref Cpu(e.Cpu);
        if (e.Kind == KernelEventKind.Switch) return OnSwitch(ref cpu, e, t);

        // Every other kind starts with evidence that its logging thread runs, which leaves it current on this CPU.
        var pidSlot = LoggedBy(ref cpu, e, t);
        switch (e.Kind)
        {
            case KernelEventKind.Waking:
                return OnWaking(e, t, pidSlot, counted: true);
            case KernelEventKind.WakeupNew:
                return OnWaking(e, t, pidSlot, counted: false);
            case KernelEventKind.Migrate:
                if (e.MigratingTid != 0 && Region.Contains(t)) Stats(e.MigratingTid).Migrations++;
                break;
            case KernelEventKind.Fork:
                Lineage.OnFork(e.ParentTid, e.ChildTid, e.ChildKind, t);
                break;
            case KernelEventKind.Exit:
                Lineage.OnExit(e.ExitingTid, t);
                break;
            case KernelEventKind.Marker:
                Lineage.OnMarker();
                if (e.MarkerText is not null && Region.OnMarker(e.MarkerText, t, e.CurrentTid)) OnRegionBegin();
                break;
            default:
                break;
        }
        return EventSlots.OfPid(pidSlot);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ref AccountedCpu Cpu(int cpu)
    {
        var cpus = _cpus;
        if ((uint)cpu < (uint)cpus.Length) return ref cpus[cpu];
        return ref GrowCpus(cpu);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private ref AccountedCpu GrowCpus(int cpu)
    {
        if (cpu >= _cpus.Length)
        {
            var old = _cpus.Length;
            Array.Resize(ref _cpus, Math.Max(cpu + 1, old * 2));
            for (var i = old; i < _cpus.Length; i++) _cpus[i] =
                new AccountedCpu { Current = Unknown, CurrentSlot = -1, LastEvidence = long.MinValue };
        }
        return ref _cpus[cpu];
    }

    private AccountedThread StateOf(int tid) => _states.At(Slots.SlotOf(tid), tid);

    /// <summary>
    /// When <paramref name="tid"/> is running (as of the last event seen), since when — the logged switch-in or, for
    /// a switch that was not logged, the repaired estimate.
    /// </summary>
    public bool TryGetRunningSince(int tid, out long since)
    {
        since = 0;
        if (_states.Find(Slots.SlotOf(tid)) is not { State: RunState.Running } s) return false;
        since = s.Since;
        return true;
    }

    /// <summary>
    /// The thread in <paramref name="slot"/> switched out to sleep after a waking for it was logged while it still ran,
    /// and nothing has settled it yet: it counts as runnable since that switch-out, unless another waking comes before
    /// its switch-in (docs/metrics.md#woken-before-switch-out). The one place this is decided: analyses that split
    /// off-CPU time ask here after the switch-out instead of applying the rule themselves.
    /// </summary>
    public bool IsWokenBeforeSwitchOut(int slot) => _states.Find(slot) is { State: RunState.WokenBeforeSwitchOut };

    /// <summary>Per-thread results; idle (tid 0) is never a thread.</summary>
    public ThreadStats Stats(int tid) => _stats.At(Slots.SlotOf(tid), tid);

    /// <summary>The thread's stats (as <see cref="Stats"/>), remembered on its state.</summary>
    private ThreadStats StatsOf(AccountedThread s, int slot, int tid) => s.Stats ??= _stats.At(slot, tid);

    /// <summary><paramref name="tid"/> is on <paramref name="cpuIndex"/> at <paramref name="t"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Evidence(ref AccountedCpu cpu, int cpuIndex, int tid, long t)
    {
        if (cpu.Current == tid)
        {
            cpu.LastEvidence = t;
            return;
        }
        ChainBroken(ref cpu, cpuIndex, tid, t);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void ChainBroken(ref AccountedCpu cpu, int cpuIndex, int tid, long t)
    {
        if (cpu.Current != Unknown)
        {
            ChainBreaks++;
            if (Region.Contains(t)) ChainBreaksInRegion++;
        }
        Repair(ref cpu, cpuIndex, tid, t);
    }

    /// <summary>
    /// A switch from cpu.Current to <paramref name="tid"/> was not logged. The previous thread was last seen at
    /// cpu.LastEvidence; the new one cannot have started before that, nor before it became runnable. Its start is
    /// the later of the two; the previous thread's run ends there too.
    /// </summary>
    private void Repair(ref AccountedCpu cpu, int cpuIndex, int tid, long t)
    {
        var slot = Slots.SlotOf(tid);
        var ts = _states.At(slot, tid);
        var start = cpu.LastEvidence == long.MinValue ? t : cpu.LastEvidence;
        if (ts.State is RunState.Runnable or RunState.Blocked or RunState.WokenBeforeSwitchOut && ts.Since > start)
            start = Math.Min(ts.Since, t);

        if (cpu.Current > 0)
        {
            var prev = StateOf(cpu.Current);
            if (prev.State == RunState.Running && prev.Cpu == cpuIndex)
            {
                Stats(cpu.Current).RunNs += Region.Overlap(prev.Since, start);
                _observers.RunEnded(cpu.Current, cpu.CurrentSlot, cpuIndex, prev.Since, start, t);
                prev.State = RunState.Unknown;
                prev.Cpu = Unknown;
            }
        }

        if (tid > 0 && ts.State == RunState.Running && ts.Cpu == cpuIndex)
        {
            // This CPU had lost track (Unknown) but the thread never left: nothing to estimate.
            SetCurrent(ref cpu, cpuIndex, tid, slot, start, t);
            return;
        }

        if (tid > 0)
        {
            var runnableSince = long.MinValue;
            switch (ts.State)
            {
                case RunState.Running when ts.Cpu != Unknown:
                    // Still marked on another CPU: its switch-out there was lost too. It ended there no later than
                    // start.
                    EndLostRun(Stats(tid), ts, tid, slot, start, t);
                    break;
                case RunState.Runnable or RunState.WokenBeforeSwitchOut:
                    Charge(Stats(tid), ts, start);
                    runnableSince = ts.Since;
                    break;
                case RunState.Blocked:
                    Charge(Stats(tid), ts, start);
                    break;
            }
            if (ts.State != RunState.Unknown && ts.State != RunState.Dead && Region.Contains(t))
                Stats(tid).RepairedStarts++;
            StartRun(ts, tid, slot, cpuIndex, start, t, runnableSince);
        }
        SetCurrent(ref cpu, cpuIndex, tid, tid > 0 ? slot : -1, start, t);
    }

    /// <summary>From <paramref name="since"/>, <paramref name="cpuIndex"/> runs <paramref name="tid"/>.</summary>
    private void SetCurrent(ref AccountedCpu cpu, int cpuIndex, int tid, int slot, long since, long t)
    {
        cpu.Current = tid;
        cpu.CurrentSlot = slot;
        cpu.LastEvidence = t;
        cpu.TidStands = tid != Unknown;
        _observers.CpuTaskChanged(cpuIndex, tid, since, t);
    }

    /// <summary>
    /// The thread is still marked running on another CPU, where its switch-out was not logged: its run there ended at
    /// that CPU's last evidence (no later than <paramref name="bound"/>), and that CPU's task is unknown from then.
    /// </summary>
    private void EndLostRun(ThreadStats st, AccountedThread ts, int tid, int slot, long bound, long t)
    {
        ref var other = ref Cpu(ts.Cpu);
        var end = Math.Min(other.LastEvidence, bound);
        st.RunNs += Region.Overlap(ts.Since, end);
        _observers.RunEnded(tid, slot, ts.Cpu, ts.Since, end, t);
        other.Current = Unknown;
        other.CurrentSlot = -1;
        other.TidStands = false;
        _observers.CpuTaskChanged(ts.Cpu, Unknown, end, t);
    }

    /// <summary>Adds the thread's time in its current state, from its <c>Since</c> to <paramref name="end"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Charge(ThreadStats st, AccountedThread ts, long end)
    {
        var ns = Region.Overlap(ts.Since, end);
        switch (ts.State)
        {
            case RunState.Running: st.RunNs += ns; break;
            case RunState.Runnable or RunState.WokenBeforeSwitchOut: st.ReadyNs += ns; break;
            case RunState.Blocked: st.WaitNs += ns; break;
        }
    }

    private void StartRun(AccountedThread ts, int tid, int slot, int cpuIndex, long since, long t, long runnableSince)
    {
        ts.State = RunState.Running;
        ts.Since = since;
        ts.Cpu = cpuIndex;
        _observers.RunStarted(tid, slot, cpuIndex, since, t, runnableSince);
    }

    private EventSlots OnSwitch(ref AccountedCpu cpu, in KernelEvent e, long t)
    {
        SwitchEvents++;
        Evidence(ref cpu, e.Cpu, e.PrevTid, t);
        var inRegion = Region.Contains(t);
        var prevSlot = e.PrevTid > 0 ? SwitchOut(e, t, inRegion) : -1;
        var nextSlot = e.NextTid > 0 ? SwitchIn(e, t, inRegion) : -1;
        SetCurrent(ref cpu, e.Cpu, e.NextTid, nextSlot, t, t);
        return EventSlots.OfSwitch(prevSlot, nextSlot);
    }

    /// <summary>The switch's previous thread leaves its CPU: blocked, runnable or dead. Returns its slot.</summary>
    // Inlined, as SwitchIn: one switch per two or three events runs both (a call each otherwise).
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int SwitchOut(in KernelEvent e, long t, bool inRegion)
    {
        var prev = e.PrevTid;
        var slot = Slots.SlotOf(prev);
        var ps = _states.At(slot, prev);
        var st = StatsOf(ps, slot, prev);
        if (ps.State == RunState.Running)
        {
            st.RunNs += Region.Overlap(ps.Since, t);
            _observers.RunEnded(prev, slot, ps.Cpu, ps.Since, t, t);
        }
        var preempted = TaskState.IsPreempted(e.PrevState);
        var dead = (e.PrevState & (TaskState.ExitDead | TaskState.ExitZombie)) != 0 && !preempted;
        if (inRegion)
        {
            if (preempted) st.InvoluntarySwitches++;
            else if (!dead) st.VoluntarySwitches++;
        }
        // A blocking switch-out can follow its own wakeup: ETW can log ReadyThread before the readied thread's
        // CSwitch, and Linux's waker CPU can log sched_waking before the sleeper's CPU logs sched_switch. On Linux the
        // waking may also have found the thread still running (then it stays running and this is a new wait): that is
        // settled by whichever comes next, another waking or the switch-in.
        var alreadyWoken = ps.WokenWhileRunning && !preempted && !dead;
        ps.State = dead ? RunState.Dead
            : preempted ? RunState.Runnable
            : alreadyWoken ? RunState.WokenBeforeSwitchOut : RunState.Blocked;
        ps.Woken = alreadyWoken;
        ps.WokenWhileRunning = false;
        ps.Since = t;
        ps.Cpu = Unknown;
        if (ps.State is RunState.Runnable or RunState.WokenBeforeSwitchOut) _observers.BecameRunnable(prev, slot, t);
        return slot;
    }

    /// <summary>The switch's next thread starts running on the switch's CPU. Returns its slot.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int SwitchIn(in KernelEvent e, long t, bool inRegion)
    {
        var next = e.NextTid;
        var slot = Slots.SlotOf(next);
        var ns = _states.At(slot, next);
        var st = StatsOf(ns, slot, next);
        var runnableSince = long.MinValue;
        switch (ns.State)
        {
            case RunState.Runnable or RunState.WokenBeforeSwitchOut:
                runnableSince = ns.Since;
                st.ReadyNs += Region.Overlap(ns.Since, t);
                if (inRegion) st.ReadyLatency.Add(t - ns.Since);
                break;
            case RunState.Blocked:
                // Its wakeup was not logged: it waited until now as far as we can tell.
                st.WaitNs += Region.Overlap(ns.Since, t);
                break;
            case RunState.Running when ns.Cpu != Unknown && ns.Cpu != e.Cpu:
                // Its switch-out on the other CPU was not logged: a broken chain there.
                ChainBreaks++;
                if (inRegion) ChainBreaksInRegion++;
                EndLostRun(st, ns, next, slot, t, t);
                break;
        }
        ns.WokenWhileRunning = false;
        StartRun(ns, next, slot, e.Cpu, t, t, runnableSince);
        return slot;
    }

    private EventSlots OnWaking(in KernelEvent e, long t, int pidSlot, bool counted)
    {
        var woken = e.WokenTid;
        if (woken <= 0) return EventSlots.OfWaking(pidSlot, -1);
        var slot = Slots.SlotOf(woken);
        var ws = _states.At(slot, woken);
        if (counted && Region.Contains(t))
        {
            var st = StatsOf(ws, slot, woken);
            st.WakeupsReceived++;
            var waker = EventFlags.InInterrupt(e.Flags) || e.CurrentTid == 0 ? -1 : e.CurrentTid;
            st.AddWakeup(waker);
            if (waker > 0) _stats.At(pidSlot, waker).WakeupsGiven++; // the waker logged the event: pidSlot is its slot
        }
        switch (ws.State)
        {
            case RunState.WokenBeforeSwitchOut:
                // A second waking: the first found it still running, and it has been waiting since its switch-out.
                ws.State = RunState.Blocked;
                goto case RunState.Blocked;
            case RunState.Blocked:
                Charge(StatsOf(ws, slot, woken), ws, t);
                goto case RunState.Unknown;
            case RunState.Unknown:
            case RunState.Dead:
                ws.State = RunState.Runnable;
                ws.Since = t;
                ws.Woken = true;
                _observers.BecameRunnable(woken, slot, t);
                break;
            case RunState.Running:
                ws.WokenWhileRunning = true;
                break;
                // Already runnable: the wakeup changes nothing.
        }
        return EventSlots.OfWaking(pidSlot, slot);
    }

    /// <summary>
    /// The region starts: everything accumulated so far lies before it. Open intervals keep their start times and
    /// are clipped to the region when they close.
    /// </summary>
    private void OnRegionBegin()
    {
        foreach (var s in _stats.ByTid.Values) s.Reset();
        ChainBreaksInRegion = 0;
    }

    /// <summary>
    /// Closes every open interval at the end of the region (or of the trace). Call once after the last event.
    /// </summary>
    public void Complete()
    {
        var end = Region.HasEnd ? Region.End : LastTimestamp;
        foreach (var (tid, ts) in _states.InOrder)
        {
            if (tid <= 0) continue;
            Charge(Stats(tid), ts, end);
            if (ts.State == RunState.Running) _observers.RunEnded(tid, Slots.SlotOf(tid), ts.Cpu, ts.Since, end, end);
            ts.Since = end;
        }
    }

    /// <summary>
    /// The CPUs below <paramref name="cpuCount"/> that logged no event at all (offline, or idle throughout with no
    /// switch logged): nothing is known of them, so no time is charged there.
    /// </summary>
    public IReadOnlyList<int> SilentCpus(int cpuCount)
    {
        var silent = new List<int>();
        for (var c = 0; c < cpuCount; c++)
            if (c >= _cpus.Length || _cpus[c].LastEvidence == long.MinValue) silent.Add(c);
        return silent;
    }

    /// <summary>The threads seen or created in the trace that descend (by fork) from <paramref name="rootPid"/>,
    /// including it.</summary>
    public IReadOnlyList<int> Descendants(int rootPid) => Lineage.Descendants(rootPid, _stats.ByTid.Keys);
}
