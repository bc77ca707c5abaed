using System.Runtime.CompilerServices;
using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// Per-thread scheduler accounting in one streaming pass: run, ready and wait time, switches, migrations, wakeups
/// and ready latency (docs/metrics.md#threads). Robust to broken per-CPU switch chains: every event names the thread
/// running on its CPU (common_pid), so when that is not the thread the last switch put there, a switch was not logged;
/// the chain is repaired at that point (start estimated, see <see cref="SwitchChainRepair"/>) and counted in
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
    private CpuTable _cpus = new();
    private readonly SwitchChainRepair _repair;

    public MeasuredRegion Region { get; } = new();

    /// <summary>
    /// The reader's thread names, when the session has them: a wake chain's program is its processes' name
    /// (docs/metrics.md#wake-chains).
    /// </summary>
    public ThreadTable? Names { get; init; }

    /// <summary>
    /// Whether switch-ins add to each thread's <see cref="ThreadStats.ReadyLatency"/> (true unless told), and the
    /// pass's wakeup analyzer to its wakeup-latency histograms. False for a pass whose histograms no report reads, the
    /// focused timeline's second pass: the accounting's adds were 6.9 % of its CPU samples on a busy perf.data, the
    /// wakeups' 8 % of what was left (docs/performance.md#second-pass-histograms).
    /// </summary>
    public bool RecordsReadyLatency { get; init; } = true;

    /// <summary>
    /// tid → dense slot, shared by every analyzer of the pass so each indexes its per-thread arrays by slot.
    /// </summary>
    public ThreadSlots Slots { get; } = new();
    public long ChainBreaks => _repair.ChainBreaks;
    public long ChainBreaksInRegion => _repair.ChainBreaksInRegion;
    public long SwitchEvents { get; private set; }
    public long FirstTimestamp => _span.First;
    public long LastTimestamp => _span.Last;
    private TraceSpan _span = new();

    /// <summary>
    /// Which process each thread belongs to (the one place that answers it): fed by this pass's creation, exec, exit
    /// and marker events.
    /// </summary>
    public ProcessLineage Lineage { get; }

    public ThreadAccounting()
    {
        Lineage = new ProcessLineage(Region);
        Stages = new PassStages(this);
        _repair = new SwitchChainRepair(this);
    }

    public IReadOnlyDictionary<int, ThreadStats> Threads => _stats.ByTid;

    /// <summary>The pass's stages, which <see cref="AnalysisPass"/> feeds before its analyzers.</summary>
    public PassStages Stages { get; }

    /// <summary>Who is told of run intervals and CPU occupancy.</summary>
    internal SchedulingObservers Observers { get; } = new();

    /// <summary>Adds an observer of run intervals and CPU occupancy; subscribe before the first event.</summary>
    public void Subscribe(ISchedulingObserver observer) => Observers.Add(observer);

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
        _span.See(t);
        // Fast path: an evidence-only event of the thread this CPU already runs moves its last-seen time, nothing else.
        if (_cpus.TryStillRunning(e.Cpu, e.CurrentTid, t, vouched: false, out var slot))
        {
            slots = EventSlots.OfPid(slot);
            return true;
        }
        // An unmodelled event naming another thread than the switch chain's is no proof the chain broke: the kernel
        // logs some inside the context switch after sched_switch with the previous task's pid (tlb_flush,
        // x86_fpu_regs_deactivated, write_msr), and a co-kernel's threads (Xenomai/Cobalt) run outside Linux's
        // scheduler. Such an event only tells who runs on a CPU nothing is known of yet.
        if (e.Kind == KernelEventKind.Other && _cpus.Knows(e.Cpu))
        {
            slots = EventSlots.OfPid(Slots.SlotOfThread(e.CurrentTid));
            return true;
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
    /// path does (<see cref="CpuTable.TryStillRunning"/>) and returns true; otherwise it changes nothing and returns
    /// false. Why: most events are syscalls of the running thread, and this one compare settles both questions, where
    /// a separate look at the event's tids in front of the pass cost about 3 % of the analysis (docs/performance.md,
    /// "tid-reuse-check").
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal bool TryEvidenceOfCurrent(in KernelEvent e, out EventSlots slots)
    {
        if (_cpus.TryStillRunning(e.Cpu, e.CurrentTid, e.Timestamp, vouched: true, out var slot))
        {
            _span.See(e.Timestamp);
            slots = EventSlots.OfPid(slot);
            return true;
        }
        slots = default;
        return false;
    }

    /// <summary>
    /// A tid now stands for another thread than before (<see cref="ThreadInstanceMap.Epoch"/> moved): no CPU's
    /// current thread is vouched for by its tid any more, until its next switch-in.
    /// </summary>
    internal void ForgetCurrentTids() => _cpus.ForgetTids();

    /// <summary><see cref="OnEvent"/> for a switch (<see cref="AnalysisPass"/> has switched on the kind).</summary>
    internal EventSlots OnSwitchEvent(in KernelEvent e)
    {
        var t = e.Timestamp;
        _span.See(t);
        return OnSwitch(ref Cpu(e.Cpu), e, t);
    }

    /// <summary><see cref="OnEvent"/> for a waking (<see cref="AnalysisPass"/> has switched on the kind).</summary>
    internal EventSlots OnWakingEvent(in KernelEvent e)
    {
        var t = e.Timestamp;
        _span.See(t);
        var pidSlot = LoggedBy(ref Cpu(e.Cpu), e, t);
        return OnWaking(e, t, pidSlot, counted: true);
    }

    /// <summary>
    /// <see cref="OnEvent"/> for a kind that is not evidence-only (switch, wakeups, migrate, fork, exit, marker).
    /// </summary>
    internal EventSlots OnModelled(in KernelEvent e)
    {
        var t = e.Timestamp;
        _span.See(t);
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
    internal ref AccountedCpu Cpu(int cpu) => ref _cpus.At(cpu);

    internal AccountedThread StateAt(int slot, int tid) => _states.At(slot, tid);

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
        _repair.ChainBroken(ref cpu, cpuIndex, tid, t);
    }

    /// <summary>From <paramref name="since"/>, <paramref name="cpuIndex"/> runs <paramref name="tid"/>.</summary>
    internal void SetCurrent(ref AccountedCpu cpu, int cpuIndex, int tid, int slot, long since, long t)
    {
        cpu.Current = tid;
        cpu.CurrentSlot = slot;
        cpu.LastEvidence = t;
        cpu.TidStands = tid != Unknown;
        Observers.CpuTaskChanged(cpuIndex, tid, since, t);
    }

    internal void StartRun(AccountedThread ts, int tid, int slot, int cpuIndex, long since, long t, long runnableSince)
    {
        ts.Run(cpuIndex, since);
        Observers.RunStarted(tid, slot, cpuIndex, since, t, runnableSince);
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
            Observers.RunEnded(prev, slot, ps.Cpu, ps.Since, t, t);
        }
        var preempted = TaskState.IsPreempted(e.PrevState);
        var dead = (e.PrevState & (TaskState.ExitDead | TaskState.ExitZombie)) != 0 && !preempted;
        if (inRegion)
        {
            if (preempted) st.InvoluntarySwitches++;
            else if (!dead) st.VoluntarySwitches++;
        }
        if (ps.LeaveCpu(preempted, dead, t)) Observers.BecameRunnable(prev, slot, t);
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
                if (inRegion && RecordsReadyLatency) st.ReadyLatency.Add(t - ns.Since);
                break;
            case RunState.Blocked:
                // Its wakeup was not logged: it waited until now as far as we can tell.
                st.WaitNs += Region.Overlap(ns.Since, t);
                break;
            case RunState.Running when ns.Cpu != Unknown && ns.Cpu != e.Cpu:
                // Its switch-out on the other CPU was not logged: a broken chain there.
                _repair.LostSwitchOut(st, ns, next, slot, t);
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
        if (ws.State is RunState.Blocked or RunState.WokenBeforeSwitchOut)
        {
            // After a WokenBeforeSwitchOut, a second waking: the first found it still running, and it has been
            // waiting since its switch-out.
            ws.State = RunState.Blocked;
            ws.Charge(StatsOf(ws, slot, woken), Region, t);
        }
        if (ws.Wake(t)) Observers.BecameRunnable(woken, slot, t);
        return EventSlots.OfWaking(pidSlot, slot);
    }

    /// <summary>
    /// The region starts: everything accumulated so far lies before it. Open intervals keep their start times and
    /// are clipped to the region when they close.
    /// </summary>
    private void OnRegionBegin()
    {
        foreach (var s in _stats.ByTid.Values) s.Reset();
        _repair.OnRegionBegin();
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
            ts.Charge(Stats(tid), Region, end);
            if (ts.State == RunState.Running) Observers.RunEnded(tid, Slots.SlotOf(tid), ts.Cpu, ts.Since, end, end);
            ts.Since = end;
        }
    }

    /// <summary>
    /// The CPUs below <paramref name="cpuCount"/> that logged no event at all (offline, or idle throughout with no
    /// switch logged): nothing is known of them, so no time is charged there.
    /// </summary>
    public IReadOnlyList<int> SilentCpus(int cpuCount) => _cpus.Silent(cpuCount);
}
