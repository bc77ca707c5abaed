using TraceLab.Core;

namespace TraceLab.Analyzers.Smp;

/// <summary>
/// How threads used the CPUs (docs/metrics.md ("SMP effects")): per-thread residency on each CPU, migrations and CPU changes,
/// same- vs cross-CPU wakeups and time runnable while a CPU idled; per-CPU busy, idle and switches.
/// Each CPU's current task follows the same evidence rule and repair estimate as <see cref="ThreadAccounting"/>
/// (every event's common_pid is running on its CPU, because switches can go unlogged), so a thread's residency sums
/// to its run time there. Memory grows with threads × CPUs, never with the number of events.
/// </summary>
public sealed class SmpAnalyzer : IKernelAnalyzer
{
    private const int Unknown = -1;

    private enum RunState : byte { Unknown, Running, Runnable, Blocked, Dead }

    private sealed class ThreadState
    {
        public ThreadState(SmpThreadStats stats) => Stats = stats;

        public SmpThreadStats Stats { get; }
        public RunState State;
        public long Since;
        public int Cpu = Unknown;
        /// <summary>Survives the end of a run, so the next start can tell whether it is on another CPU.</summary>
        public int LastCpu = Unknown;
        /// <summary><see cref="IdleCpuIntegral"/> reading when the thread became runnable.</summary>
        public long IdleReading;
    }

    private struct CpuState
    {
        /// <summary><see cref="Unknown"/>, 0 (idle) or a tid.</summary>
        public int Current;
        public long Since;
        public long LastEvidence;
    }

    private readonly MeasuredRegion _region;
    private readonly IdleCpuIntegral _idle;
    private readonly Dictionary<int, ThreadState> _state = new();
    private readonly Dictionary<int, SmpThreadStats> _threads = new();
    private readonly List<SmpCpuStats> _cpuStats = new();
    private CpuState[] _cpus = [];

    /// <param name="region">The pass's region (owned by <see cref="ThreadAccounting"/>), used to clip and count.</param>
    public SmpAnalyzer(MeasuredRegion region)
    {
        _region = region;
        _idle = new IdleCpuIntegral(region);
    }

    /// <summary>Per thread; idle (tid 0) is never a thread.</summary>
    public IReadOnlyDictionary<int, SmpThreadStats> Threads => _threads;

    /// <summary>Indexed by CPU number, up to the highest CPU that logged an event.</summary>
    public IReadOnlyList<SmpCpuStats> Cpus => _cpuStats;

    public SmpTotals Totals(IEnumerable<int> tids) => SmpTotals.Over(_threads, tids);

    public void OnEvent(in KernelEvent e)
    {
        var t = e.Timestamp;
        _idle.Advance(t);
        EnsureCpu(e.Cpu);
        Evidence(e.Cpu, e.Kind == KernelEventKind.Switch ? e.PrevTid : e.Pid, t);
        switch (e.Kind)
        {
            case KernelEventKind.Switch:
                OnSwitch(e, t);
                break;
            case KernelEventKind.Waking:
                OnWaking(e, t, counted: true);
                break;
            case KernelEventKind.WakeupNew:
                OnWaking(e, t, counted: false);
                break;
            case KernelEventKind.Migrate:
                if (e.Tid > 0 && _region.Contains(t)) Thread(e.Tid).Stats.Migrations++;
                break;
        }
    }

    public void OnRegionBegin()
    {
        foreach (var s in _threads.Values) s.Reset();
        foreach (var c in _cpuStats) c.Reset();
        _idle.OnRegionBegin(_region.Begin);
    }

    public void Complete(long end)
    {
        _idle.Advance(end);
        foreach (var ts in _state.Values)
        {
            switch (ts.State)
            {
                case RunState.Running:
                    ts.Stats.AddResidency(ts.Cpu, _region.Overlap(ts.Since, end));
                    break;
                case RunState.Runnable:
                    ts.Stats.RunnableWhileIdleNs += _idle.Since(ts.IdleReading);
                    break;
            }
            ts.Since = end;
        }
        for (var c = 0; c < _cpus.Length; c++)
        {
            EndTenure(c, end);
            _cpus[c].Since = end;
        }
    }

    private void EnsureCpu(int cpu)
    {
        if (cpu < _cpus.Length) return;
        var old = _cpus.Length;
        Array.Resize(ref _cpus, cpu + 1);
        for (var i = old; i < _cpus.Length; i++)
        {
            _cpus[i] = new CpuState { Current = Unknown, Since = long.MinValue, LastEvidence = long.MinValue };
            _cpuStats.Add(new SmpCpuStats(i));
        }
    }

    private ThreadState Thread(int tid)
    {
        if (!_state.TryGetValue(tid, out var s))
        {
            var stats = new SmpThreadStats(tid);
            _threads[tid] = stats;
            _state[tid] = s = new ThreadState(stats);
        }
        return s;
    }

    private void Evidence(int c, int tid, long t)
    {
        _cpuStats[c].Seen = true;
        if (_cpus[c].Current == tid)
        {
            _cpus[c].LastEvidence = t;
            return;
        }
        Repair(c, tid, t);
    }

    /// <summary>
    /// A switch to <paramref name="tid"/> on <paramref name="c"/> was not logged (or the CPU is new). The start is
    /// estimated exactly as <see cref="ThreadAccounting"/> does (docs/metrics.md 1.4): the CPU's last evidence of
    /// its previous task, or the thread's wakeup if later.
    /// </summary>
    private void Repair(int c, int tid, long t)
    {
        var start = _cpus[c].LastEvidence == long.MinValue ? t : _cpus[c].LastEvidence;
        var ts = tid > 0 ? Thread(tid) : null;
        if (ts is { State: RunState.Runnable or RunState.Blocked } && ts.Since > start) start = Math.Min(ts.Since, t);

        var prevTid = _cpus[c].Current;
        if (prevTid > 0)
        {
            var prev = Thread(prevTid);
            if (prev.State == RunState.Running && prev.Cpu == c)
            {
                prev.Stats.AddResidency(c, _region.Overlap(prev.Since, start));
                prev.State = RunState.Unknown;
                prev.Cpu = Unknown;
            }
        }
        EndTenure(c, start);

        if (ts is not null && !(ts.State == RunState.Running && ts.Cpu == c))
        {
            switch (ts.State)
            {
                case RunState.Running when ts.Cpu != Unknown:
                    LeaveCpuUnlogged(ts, Math.Min(_cpus[ts.Cpu].LastEvidence, start));
                    break;
                case RunState.Runnable:
                    // The integral has run up to t, but the thread has been running since the estimated start: the
                    // runnable interval bounds the idle overlap (exact when the idle set did not change in between).
                    ts.Stats.RunnableWhileIdleNs += Math.Min(_idle.Since(ts.IdleReading), _region.Overlap(ts.Since, start));
                    break;
            }
            StartRunning(ts, c, start, t);
        }
        SetCurrent(c, tid, start, t);
    }

    private void OnSwitch(in KernelEvent e, long t)
    {
        var c = e.Cpu;
        if (_region.Contains(t)) _cpuStats[c].Switches++;

        if (e.PrevTid > 0)
        {
            var ps = Thread(e.PrevTid);
            if (ps.State == RunState.Running && ps.Cpu == c) ps.Stats.AddResidency(c, _region.Overlap(ps.Since, t));
            var preempted = TaskState.IsPreempted(e.PrevState);
            var dead = (e.PrevState & (TaskState.ExitDead | TaskState.ExitZombie)) != 0 && !preempted;
            ps.State = dead ? RunState.Dead : preempted ? RunState.Runnable : RunState.Blocked;
            ps.Since = t;
            ps.Cpu = Unknown;
            ps.IdleReading = _idle.Value;
        }
        EndTenure(c, t);

        if (e.NextTid > 0)
        {
            var ns = Thread(e.NextTid);
            switch (ns.State)
            {
                case RunState.Runnable:
                    ns.Stats.RunnableWhileIdleNs += _idle.Since(ns.IdleReading);
                    break;
                case RunState.Running when ns.Cpu != Unknown && ns.Cpu != c:
                    LeaveCpuUnlogged(ns, Math.Min(_cpus[ns.Cpu].LastEvidence, t));
                    break;
            }
            StartRunning(ns, c, t, t);
        }
        SetCurrent(c, e.NextTid, t, t);
    }

    private void OnWaking(in KernelEvent e, long t, bool counted)
    {
        var woken = e.WokenTid;
        if (woken <= 0) return;
        var ws = Thread(woken);
        if (counted && _region.Contains(t))
        {
            var cross = e.TargetCpu != e.Cpu;
            if (cross) ws.Stats.WakeupsReceivedCrossCpu++;
            else ws.Stats.WakeupsReceivedSameCpu++;

            // In interrupt context (or from idle) common_pid is whoever was interrupted, not the waker.
            if (!EventFlags.InInterrupt(e.Flags) && e.Pid > 0)
            {
                var giver = Thread(e.Pid).Stats;
                if (cross) giver.WakeupsGivenCrossCpu++;
                else giver.WakeupsGivenSameCpu++;
            }
        }
        if (ws.State is RunState.Blocked or RunState.Unknown or RunState.Dead)
        {
            ws.State = RunState.Runnable;
            ws.Since = t;
            ws.IdleReading = _idle.Value;
        }
    }

    private void StartRunning(ThreadState ts, int c, long since, long t)
    {
        if (ts.LastCpu != Unknown && ts.LastCpu != c && _region.Contains(t)) ts.Stats.CpuChanges++;
        ts.State = RunState.Running;
        ts.Since = since;
        ts.Cpu = c;
        ts.LastCpu = c;
    }

    /// <summary>
    /// The thread shows up elsewhere while still current on its old CPU: its switch-out there was lost. Its run there
    /// ends at <paramref name="end"/> and that CPU's task is unknown until its next event.
    /// </summary>
    private void LeaveCpuUnlogged(ThreadState ts, long end)
    {
        var old = ts.Cpu;
        ts.Stats.AddResidency(old, _region.Overlap(ts.Since, end));
        if (_cpus[old].Current == ts.Stats.Tid)
        {
            EndTenure(old, end);
            _cpus[old].Current = Unknown;
        }
        ts.Cpu = Unknown;
    }

    /// <summary>Charges the CPU's current task (busy or idle) up to <paramref name="end"/>; unknown time counts nowhere.</summary>
    private void EndTenure(int c, long end)
    {
        var cpu = _cpus[c];
        if (cpu.Current == Unknown) return;
        var ns = _region.Overlap(cpu.Since, end);
        if (cpu.Current == 0) _cpuStats[c].IdleNs += ns;
        else _cpuStats[c].BusyNs += ns;
    }

    private void SetCurrent(int c, int tid, long since, long evidence)
    {
        ref var cpu = ref _cpus[c];
        if (cpu.Current == 0) _idle.CpuLeavesIdle();
        if (tid == 0) _idle.CpuEntersIdle();
        cpu.Current = tid;
        cpu.Since = since;
        cpu.LastEvidence = evidence;
    }
}
