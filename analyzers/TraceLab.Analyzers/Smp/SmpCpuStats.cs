namespace TraceLab.Analyzers.Smp;

/// <summary>What one CPU did over the measured region (definitions in docs/metrics.md#smp).</summary>
public sealed class SmpCpuStats
{
    internal SmpCpuStats(int cpu) => Cpu = cpu;

    public int Cpu { get; }
    /// <summary>
    /// At least one event was logged on this CPU; a CPU number below the highest one seen may never be.
    /// </summary>
    public bool Seen { get; internal set; }
    /// <summary>Time a thread (not the idle task) was current.</summary>
    public long BusyNs { get; internal set; }
    /// <summary>Time the idle task (tid 0) was current.</summary>
    public long IdleNs { get; internal set; }
    /// <summary>sched_switch events logged on this CPU.</summary>
    public long Switches { get; internal set; }

    internal void Reset() => BusyNs = IdleNs = Switches = 0;
}
