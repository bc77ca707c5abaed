using TraceLab.Analyzers.Kernel;
using TraceLab.Core;

namespace TraceLab.Analyzers.Smp;

/// <summary>
/// How threads used the CPUs (docs/metrics.md#smp): per-thread residency on each CPU, migrations and CPU changes,
/// same- vs cross-CPU wakeups and time runnable while a CPU idled; per-CPU busy, idle and switches.
/// Run intervals and CPU occupancy come from <see cref="ThreadAccounting"/> (logged or repaired, one state machine for
/// every analysis), so a thread's residency sums to its run time. Memory grows with threads × CPUs, never with events.
/// </summary>
public sealed class SmpAnalyzer : IPerKindAnalyzer, ISchedulingObserver
{
    private const int Unknown = ThreadAccounting.UnknownTask;

    private sealed class ThreadState
    {
        public ThreadState(SmpThreadStats stats) => Stats = stats;

        public SmpThreadStats Stats { get; }
        /// <summary>CPU of the previous run, so the next start can tell whether it is on another CPU.</summary>
        public int LastCpu = Unknown;
        public bool Runnable;
        /// <summary><see cref="IdleCpuIntegral"/> reading when the thread became runnable.</summary>
        public long IdleReading;
    }

    private struct CpuState
    {
        /// <summary><see cref="Unknown"/>, 0 (idle) or a tid.</summary>
        public int Current;
        public long Since;
    }

    private readonly MeasuredRegion _region;
    private readonly IdleCpuIntegral _idle;
    private readonly ThreadSlots _slots;
    private SlotTable<ThreadState> _state = new(static (tid, _) => new ThreadState(new SmpThreadStats(tid)));
    /// <summary>The threads' stats by tid, in first-seen order (what the report reads).</summary>
    private readonly Dictionary<int, SmpThreadStats> _threads = new();
    private readonly List<SmpCpuStats> _cpuStats = new();
    /// <summary><see cref="_cpuStats"/> as an array: read on every event.</summary>
    private SmpCpuStats[] _cpuStatsArray = [];
    private CpuState[] _cpus = [];

    /// <summary>Subscribes to <paramref name="accounting"/>'s transitions and shares its region.</summary>
    public SmpAnalyzer(ThreadAccounting accounting)
    {
        ArgumentNullException.ThrowIfNull(accounting);
        _region = accounting.Region;
        _idle = new IdleCpuIntegral(_region);
        _slots = accounting.Slots;
        accounting.Subscribe(this);
    }

    /// <summary>Per thread; idle (tid 0) is never a thread.</summary>
    public IReadOnlyDictionary<int, SmpThreadStats> Threads => _threads;

    /// <summary>Indexed by CPU number, up to the highest CPU that logged an event.</summary>
    public IReadOnlyList<SmpCpuStats> Cpus => _cpuStats;

    public SmpTotals Totals(IEnumerable<int> tids) => SmpTotals.Over(_threads, tids);

    public void OnEvent(in KernelEvent e)
    {
        switch (e.Kind)
        {
            case KernelEventKind.Switch: OnSwitch(e); break;
            case KernelEventKind.Waking:
                OnWaking(
                e, _slots.SlotOfThread(e.CurrentTid), _slots.SlotOfThread(e.WokenTid)); break;
            case KernelEventKind.WakeupNew:
                OnWakeupNew(
                e, _slots.SlotOfThread(e.CurrentTid), _slots.SlotOfThread(e.WokenTid)); break;
            case KernelEventKind.Migrate: OnMigrate(e); break;
            default: CpuStats(e.Cpu); break;
        }
    }

    // Per-kind entry points (IPerKindAnalyzer): AnalysisPass switches on the kind once and calls only the analyzers
    // that use it.

    public PerKindEvents Wants => PerKindEvents.Switch | PerKindEvents.Waking | PerKindEvents.CpuEvidence;

    public void OnSwitch(in KernelEvent e, in EventSlots slots) => OnSwitch(e);

    public void OnWaking(in KernelEvent e, in EventSlots slots) => OnWaking(e, slots.Pid, slots.Woken);

    /// <summary>The CPU's stats, marked seen (an event was logged there).</summary>
    private SmpCpuStats CpuStats(int cpu)
    {
        var all = _cpuStatsArray;
        if ((uint)cpu >= (uint)all.Length)
        {
            EnsureCpu(cpu);
            all = _cpuStatsArray;
        }
        var cpuStats = all[cpu];
        cpuStats.Seen = true;
        return cpuStats;
    }

    /// <summary>An event of a kind this analyzer does not model was logged on <paramref name="cpu"/>.</summary>
    public void OnCpuEvidence(int cpu) => CpuStats(cpu);

    private void OnSwitch(in KernelEvent e)
    {
        var cpuStats = CpuStats(e.Cpu);
        if (_region.Contains(e.Timestamp)) cpuStats.Switches++;
    }

    private void OnWaking(in KernelEvent e, int pidSlot, int wokenSlot)
    {
        CpuStats(e.Cpu);
        OnWaking(e, e.Timestamp, counted: true, pidSlot, wokenSlot);
    }

    private void OnWakeupNew(in KernelEvent e, int pidSlot, int wokenSlot)
    {
        CpuStats(e.Cpu);
        OnWaking(e, e.Timestamp, counted: false, pidSlot, wokenSlot);
    }

    private void OnMigrate(in KernelEvent e)
    {
        CpuStats(e.Cpu);
        var tid = e.MigratingTid;
        if (tid > 0 && _region.Contains(e.Timestamp)) ThreadAt(_slots.SlotOf(tid), tid).Stats.Migrations++;
    }

    public void OnRegionBegin()
    {
        foreach (var s in _threads.Values) s.Reset();
        foreach (var c in _cpuStats) c.Reset();
        _idle.OnRegionBegin(_region.Begin);
    }

    /// <summary>Runs still open were closed by the accounting's completion, which comes first.</summary>
    public void Complete(long end)
    {
        _idle.Advance(end);
        foreach (var (_, ts) in _state.InOrder)
        {
            if (ts.Runnable) ts.Stats.RunnableWhileIdleNs += _idle.Since(ts.IdleReading);
            ts.Runnable = false;
        }
        for (var c = 0; c < _cpus.Length; c++)
        {
            EndTenure(c, end);
            _cpus[c].Since = end;
        }
    }

    // The scheduling transitions (ISchedulingObserver), from ThreadAccounting.

    public void OnRunEnded(int tid, int slot, int cpu, long since, long end, long t)
    {
        _idle.Advance(t);
        ThreadAt(slot, tid).Stats.AddResidency(cpu, _region.Overlap(since, end));
    }

    public void OnRunStarted(int tid, int slot, int cpu, long since, long t, long runnableSince)
    {
        _idle.Advance(t);
        var ts = ThreadAt(slot, tid);
        if (ts.Runnable && runnableSince != long.MinValue)
        {
            // The integral has run up to t, but a repaired run started earlier: the runnable interval bounds the idle
            // overlap (exact when the idle set did not change in between).
            ts.Stats.RunnableWhileIdleNs += Math.Min(
                _idle.Since(ts.IdleReading), _region.Overlap(runnableSince, since));
        }
        ts.Runnable = false;
        if (ts.LastCpu != Unknown && ts.LastCpu != cpu && _region.Contains(t)) ts.Stats.CpuChanges++;
        ts.LastCpu = cpu;
    }

    public void OnRunnable(int tid, int slot, long t)
    {
        _idle.Advance(t);
        var ts = ThreadAt(slot, tid);
        ts.Runnable = true;
        ts.IdleReading = _idle.Value;
    }

    public void OnCpuTaskChanged(int cpu, int tid, long since, long t)
    {
        _idle.Advance(t);
        if ((uint)cpu >= (uint)_cpus.Length) EnsureCpu(cpu);
        EndTenure(cpu, since);
        ref var c = ref _cpus[cpu];
        if (c.Current == 0) _idle.CpuLeavesIdle();
        if (tid == 0) _idle.CpuEntersIdle();
        c.Current = tid;
        c.Since = since;
    }

    private void OnWaking(in KernelEvent e, long t, bool counted, int pidSlot, int wokenSlot)
    {
        var woken = e.WokenTid;
        if (woken <= 0) return;
        var ws = ThreadAt(wokenSlot, woken);
        if (!counted || !_region.Contains(t)) return;
        var cross = e.TargetCpu != e.Cpu;
        if (cross) ws.Stats.WakeupsReceivedCrossCpu++;
        else ws.Stats.WakeupsReceivedSameCpu++;

        // In interrupt context (or from idle) common_pid is whoever was interrupted, not the waker.
        if (!EventFlags.InInterrupt(e.Flags) && e.CurrentTid > 0)
        {
            var giver = ThreadAt(pidSlot, e.CurrentTid).Stats;
            if (cross) giver.WakeupsGivenCrossCpu++;
            else giver.WakeupsGivenSameCpu++;
        }
    }

    private void EnsureCpu(int cpu)
    {
        if (cpu < _cpus.Length) return;
        var old = _cpus.Length;
        Array.Resize(ref _cpus, cpu + 1);
        for (var i = old; i < _cpus.Length; i++)
        {
            _cpus[i] = new CpuState { Current = Unknown, Since = long.MinValue };
            _cpuStats.Add(new SmpCpuStats(i));
        }
        _cpuStatsArray = [.. _cpuStats];
    }

    /// <summary>The state of <paramref name="tid"/> (at <paramref name="slot"/>), created on first use.</summary>
    private ThreadState ThreadAt(int slot, int tid)
    {
        if (_state.Find(slot) is { } s) return s;
        s = _state.At(slot, tid);
        _threads[tid] = s.Stats;
        return s;
    }


    /// <summary>
    /// Charges the CPU's current task (busy or idle) up to <paramref name="end"/>; unknown time counts nowhere.
    /// </summary>
    private void EndTenure(int c, long end)
    {
        ref readonly var cpu = ref _cpus[c];
        if (cpu.Current == Unknown) return;
        var ns = _region.Overlap(cpu.Since, end);
        if (cpu.Current == 0) _cpuStatsArray[c].IdleNs += ns;
        else _cpuStatsArray[c].BusyNs += ns;
    }
}
