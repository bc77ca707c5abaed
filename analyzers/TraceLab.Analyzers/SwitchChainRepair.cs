using System.Runtime.CompilerServices;

namespace TraceLab.Analyzers;

/// <summary>
/// Repairs a CPU's switch chain where a switch was not logged (docs/metrics.md#threads): every event names the thread
/// running on its CPU, so when that is not the thread the last switch put there, the switch in between was lost. The
/// previous thread's run ends and the new one's starts at an estimate; each repair is counted. Off the hot path: the
/// accounting calls here only when an event contradicts its chain.
/// </summary>
internal sealed class SwitchChainRepair(ThreadAccounting accounting)
{
    /// <summary>Switches that were not logged, found over the whole trace.</summary>
    public long ChainBreaks { get; private set; }

    /// <summary>Of <see cref="ChainBreaks"/>, those found inside the measured region.</summary>
    public long ChainBreaksInRegion { get; private set; }

    /// <summary>The region starts: breaks found so far lie before it.</summary>
    public void OnRegionBegin() => ChainBreaksInRegion = 0;

    /// <summary>
    /// <paramref name="tid"/> logged an event on <paramref name="cpuIndex"/>, whose chain says another thread (or
    /// nothing known) runs there: a break when something was known, and the chain is repaired either way.
    /// </summary>
    // Out of line: the accounting's evidence check inlines the call, and a broken chain is rare.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public void ChainBroken(ref AccountedCpu cpu, int cpuIndex, int tid, long t)
    {
        if (cpu.Current != ThreadAccounting.UnknownTask) CountBreak(t);
        Repair(ref cpu, cpuIndex, tid, t);
    }

    /// <summary>
    /// A thread switched in on one CPU is still marked running on another, where its switch-out was not logged.
    /// </summary>
    public void LostSwitchOut(ThreadStats st, AccountedThread ts, int tid, int slot, long t)
    {
        CountBreak(t);
        EndLostRun(st, ts, tid, slot, t, t);
    }

    private void CountBreak(long t)
    {
        ChainBreaks++;
        if (accounting.Region.Contains(t)) ChainBreaksInRegion++;
    }

    /// <summary>
    /// A switch from cpu.Current to <paramref name="tid"/> was not logged. The previous thread was last seen at
    /// cpu.LastEvidence; the new one cannot have started before that, nor before it became runnable. Its start is
    /// the later of the two; the previous thread's run ends there too.
    /// </summary>
    private void Repair(ref AccountedCpu cpu, int cpuIndex, int tid, long t)
    {
        var region = accounting.Region;
        var slot = accounting.Slots.SlotOf(tid);
        var ts = accounting.StateAt(slot, tid);
        var start = cpu.LastEvidence == long.MinValue ? t : cpu.LastEvidence;
        if (ts.State is RunState.Runnable or RunState.Blocked or RunState.WokenBeforeSwitchOut && ts.Since > start)
            start = Math.Min(ts.Since, t);

        if (cpu.Current > 0)
        {
            var prev = accounting.StateAt(cpu.CurrentSlot, cpu.Current);
            if (prev.State == RunState.Running && prev.Cpu == cpuIndex)
            {
                accounting.Stats(cpu.Current).RunNs += region.Overlap(prev.Since, start);
                accounting.Observers.RunEnded(cpu.Current, cpu.CurrentSlot, cpuIndex, prev.Since, start, t);
                prev.State = RunState.Unknown;
                prev.Cpu = ThreadAccounting.UnknownTask;
            }
        }

        if (tid > 0 && ts.State == RunState.Running && ts.Cpu == cpuIndex)
        {
            // This CPU had lost track (Unknown) but the thread never left: nothing to estimate.
            accounting.SetCurrent(ref cpu, cpuIndex, tid, slot, start, t);
            return;
        }

        if (tid > 0)
        {
            var runnableSince = long.MinValue;
            switch (ts.State)
            {
                case RunState.Running when ts.Cpu != ThreadAccounting.UnknownTask:
                    // Still marked on another CPU: its switch-out there was lost too. It ended there no later than
                    // start.
                    EndLostRun(accounting.Stats(tid), ts, tid, slot, start, t);
                    break;
                case RunState.Runnable or RunState.WokenBeforeSwitchOut:
                    ts.Charge(accounting.Stats(tid), region, start);
                    runnableSince = ts.Since;
                    break;
                case RunState.Blocked:
                    ts.Charge(accounting.Stats(tid), region, start);
                    break;
            }
            if (ts.State != RunState.Unknown && ts.State != RunState.Dead && region.Contains(t))
                accounting.Stats(tid).RepairedStarts++;
            accounting.StartRun(ts, tid, slot, cpuIndex, start, t, runnableSince);
        }
        accounting.SetCurrent(ref cpu, cpuIndex, tid, tid > 0 ? slot : -1, start, t);
    }

    /// <summary>
    /// The thread is still marked running on another CPU, where its switch-out was not logged: its run there ended at
    /// that CPU's last evidence (no later than <paramref name="bound"/>), and that CPU's task is unknown from then.
    /// </summary>
    private void EndLostRun(ThreadStats st, AccountedThread ts, int tid, int slot, long bound, long t)
    {
        ref var other = ref accounting.Cpu(ts.Cpu);
        var end = Math.Min(other.LastEvidence, bound);
        st.RunNs += accounting.Region.Overlap(ts.Since, end);
        accounting.Observers.RunEnded(tid, slot, ts.Cpu, ts.Since, end, t);
        other.Current = ThreadAccounting.UnknownTask;
        other.CurrentSlot = -1;
        other.TidStands = false;
        accounting.Observers.CpuTaskChanged(ts.Cpu, ThreadAccounting.UnknownTask, end, t);
    }
}
