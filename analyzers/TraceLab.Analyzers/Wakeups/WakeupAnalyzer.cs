using System.Runtime.CompilerServices;
using TraceLab.Analyzers.Kernel;
using TraceLab.Analyzers.Locks;
using TraceLab.Core;

namespace TraceLab.Analyzers.Wakeups;

/// <summary>
/// Futile and spurious wakeups, and wakeup-to-run latency split by whether the woken thread ran on the waker's CPU
/// (docs/metrics.md#wakeups). A futile wakeup is the seed 003 receiver's fate: woken (by an event set inside a
/// lock, or a release that another thread beats it to), it runs a few microseconds and blocks again, having done
/// nothing: it paid two context switches for no progress.
/// </summary>
public sealed class WakeupAnalyzer : IPerKindAnalyzer
{
    /// <summary>
    /// A woken thread that blocks again after less CPU than this, without progress, was woken for nothing.
    /// </summary>
    public const long FutileCpuNs = 50_000;

    private readonly ThreadAccounting _accounting;
    private readonly MeasuredRegion _region;
    /// <summary>
    /// False in a pass whose latency histograms no report reads (the focused timeline's,
    /// <see cref="ThreadAccounting.RecordsReadyLatency"/>): no wakeup latencies either.
    /// </summary>
    private readonly bool _recordsLatency;
    private readonly ThreadSlots _slots;
    private SlotTable<WakeState> _state = new(static (_, _) => new WakeState());
    private SlotTable<WakeupStats> _stats = new(static (tid, _) => new WakeupStats(tid));
    /// <summary>An array, not a list: looping over none (the usual case) costs nothing per wakeup.</summary>
    private IWakeupObserver[] _observers = [];

    public WakeupAnalyzer(ThreadAccounting accounting)
    {
        _accounting = accounting;
        _region = accounting.Region;
        _recordsLatency = accounting.RecordsReadyLatency;
        _slots = accounting.Slots;
    }

    public IReadOnlyDictionary<int, WakeupStats> Threads => _stats.ByTid;

    /// <summary>Adds a viewer that sees each futile wakeup (no effect on the statistics).</summary>
    public void AddObserver(IWakeupObserver observer) => _observers = [.. _observers, observer];

    private enum Run : byte { Unknown, Running, Runnable, Blocked }

    private sealed class WakeState
    {
        public Run State;
        public long OnCpuSince;
        public long WokenAt;
        public int WakerCpu;
        public bool LatencyPending;
        /// <summary>A wakeup whose outcome (futile or not) is still open.</summary>
        public bool Evaluating;
        public long EvaluatedWakeAt;
        public long CpuSinceWake;
        public bool Progress;
    }

    private WakeState StateAt(int slot, int tid) => _state.At(slot, tid);

    private WakeupStats StatsAt(int slot, int tid) => _stats.At(slot, tid);

    public void OnEvent(in KernelEvent e)
    {
        // The kinds without an entry point (wakeup-new, migrate, fork, exit) also show their logging thread running.
        if (!PerKindEntryPoints.Dispatch(this, e, _slots)) OnThreadEvidence(e, _slots.SlotOfThread(e.CurrentTid));
    }

    // Per-kind entry points (IPerKindAnalyzer): AnalysisPass switches on the kind once and calls only the analyzers
    // that use it, with the slots of the threads the event names.

    public PerKindEvents Wants => PerKindEvents.SyscallsAndScheduling | PerKindEvents.ThreadEvidence;

    public void OnSyscallEnter(in KernelEvent e, in EventSlots slots) => OnSyscallEnter(e, slots.Pid);

    /// <summary>A syscall exit only shows its thread running.</summary>
    public void OnSyscallExit(in KernelEvent e, in EventSlots slots) => OnThreadEvidence(e, slots.Pid);

    public void OnSwitch(in KernelEvent e, in EventSlots slots) => OnSwitch(e, slots.Prev, slots.Next);

    public void OnWaking(in KernelEvent e, in EventSlots slots) => OnWakingEvent(e, slots.Pid, slots.Woken);

    public void OnThreadEvidence(in KernelEvent e, in EventSlots slots) => OnThreadEvidence(e, slots.Pid);

    private static bool ThreadContext(in KernelEvent e) => e.CurrentTid > 0 && !EventFlags.InInterrupt(e.Flags);

    private void OnWakingEvent(in KernelEvent e, int pidSlot, int wokenSlot)
    {
        var t = e.Timestamp;
        if (ThreadContext(e)) Progress(Evidence(pidSlot, e.CurrentTid, t));
        OnWaking(e, t, wokenSlot);
    }

    private void OnSyscallEnter(in KernelEvent e, int slot)
    {
        if (!ThreadContext(e)) return;
        var s = Evidence(slot, e.CurrentTid, e.Timestamp);
        // Releasing or taking a lock is progress; waiting again on it is not. Only asked while a wakeup is open.
        if (s.Evaluating && LockOperation.Classify(e, out _) is LockOpKind.Wake or LockOpKind.Semop or LockOpKind.Other)
            s.Progress = true;
    }

    /// <summary>Any other kind: the logging thread's own event shows it running.</summary>
    private void OnThreadEvidence(in KernelEvent e, int slot)
    {
        if (ThreadContext(e)) Evidence(slot, e.CurrentTid, e.Timestamp);
    }

    private static void Progress(WakeState s)
    {
        if (s.Evaluating) s.Progress = true;
    }

    /// <summary>The thread's own event: it is running, whether or not its switch-in was logged.</summary>
    /// <remarks>Inlined into the per-kind entry points (a call per syscall otherwise); the rare unlogged switch-in is
    /// out of line.</remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private WakeState Evidence(int slot, int tid, long t)
    {
        var s = StateAt(slot, tid);
        if (s.State != Run.Running) RunningUnlogged(s, tid, t);
        return s;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RunningUnlogged(WakeState s, int tid, long t)
    {
        s.State = Run.Running;
        s.OnCpuSince = _accounting.TryGetRunningSince(tid, out var since) && since <= t ? since : t;
        s.LatencyPending = false; // its switch-in was not logged: no latency sample
    }

    private void OnWaking(in KernelEvent e, long t, int wokenSlot)
    {
        var tid = e.WokenTid;
        if (tid <= 0) return;
        var s = StateAt(wokenSlot, tid);
        if (s.State is Run.Running or Run.Runnable)
        {
            if (_region.Contains(t)) StatsAt(wokenSlot, tid).Spurious++;
            return;
        }
        s.State = Run.Runnable;
        s.WokenAt = t;
        s.WakerCpu = e.Cpu;
        s.LatencyPending = true;
        if (s.Evaluating) Conclude(tid, wokenSlot, s, futile: false);
        s.Evaluating = true;
        s.EvaluatedWakeAt = t;
        s.CpuSinceWake = 0;
        s.Progress = false;
    }

    private void OnSwitch(in KernelEvent e, int prevSlot, int nextSlot)
    {
        var t = e.Timestamp;
        if (e.PrevTid > 0)
        {
            var p = StateAt(prevSlot, e.PrevTid);
            if (p.State == Run.Running && p.Evaluating) p.CpuSinceWake += t - p.OnCpuSince;
            if (TaskState.IsPreempted(e.PrevState)) p.State = Run.Runnable;
            else
            {
                p.State = Run.Blocked;
                p.LatencyPending = false;
                if (p.Evaluating)
                    Conclude(e.PrevTid, prevSlot, p, futile: !p.Progress && p.CpuSinceWake < FutileCpuNs, t);
            }
        }
        if (e.NextTid > 0)
        {
            var n = StateAt(nextSlot, e.NextTid);
            if (n.LatencyPending && _recordsLatency && _region.Contains(n.WokenAt))
            {
                var st = StatsAt(nextSlot, e.NextTid);
                (e.Cpu == n.WakerCpu ? st.SameCpuLatency : st.CrossCpuLatency).Add(t - n.WokenAt);
            }
            n.LatencyPending = false;
            n.State = Run.Running;
            n.OnCpuSince = t;
        }
    }

    private void Conclude(int tid, int slot, WakeState s, bool futile, long at = 0)
    {
        s.Evaluating = false;
        if (!_region.Contains(s.EvaluatedWakeAt)) return;
        var st = StatsAt(slot, tid);
        st.Wakeups++;
        if (!futile) return;
        st.Futile++;
        foreach (var observer in _observers) observer.OnFutileWakeup(tid, s.EvaluatedWakeAt, at);
    }

    public void OnRegionBegin()
    {
        foreach (var s in _stats.ByTid.Values) s.Reset();
    }

    /// <summary>
    /// The earliest wake time a futile wakeup not yet reported to the observers could have, at time
    /// <paramref name="now"/>: that of a wakeup still judged whose thread has neither made progress nor run
    /// <see cref="FutileCpuNs"/> since; <see cref="long.MaxValue"/> when none (the timeline's early end).
    /// </summary>
    public long EarliestUnreported(long now)
    {
        var earliest = long.MaxValue;
        foreach (var (_, s) in _state.InOrder)
        {
            if (!s.Evaluating || s.Progress || s.EvaluatedWakeAt >= earliest) continue;
            var cpu = s.CpuSinceWake + (s.State == Run.Running ? now - s.OnCpuSince : 0);
            if (cpu < FutileCpuNs) earliest = s.EvaluatedWakeAt;
        }

        return earliest;
    }

    /// <summary>Wakeups still open at the end count as not futile: the thread had not blocked again.</summary>
    public void Complete(long end)
    {
        foreach (var (tid, s) in _state.InOrder)
            if (s.Evaluating) Conclude(tid, _slots.SlotOf(tid), s, futile: false);
    }
}
