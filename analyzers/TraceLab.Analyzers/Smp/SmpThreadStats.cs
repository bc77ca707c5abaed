namespace TraceLab.Analyzers.Smp;

/// <summary>Where one thread ran and how it crossed CPUs over the measured region (docs/metrics.md#smp).</summary>
public sealed class SmpThreadStats
{
    private long[] _residency = [];

    internal SmpThreadStats(int tid) => Tid = tid;

    public int Tid { get; }

    /// <summary>
    /// Run time per CPU, indexed by CPU number. Only as long as the highest CPU the thread has residency on: use
    /// <see cref="ResidencyOn"/> for any CPU.
    /// </summary>
    public IReadOnlyList<long> ResidencyNs => _residency;

    public long TotalResidencyNs
    {
        get
        {
            long sum = 0;
            foreach (var ns in _residency) sum += ns;
            return sum;
        }
    }

    /// <summary>sched_migrate_task events naming this thread.</summary>
    public long Migrations { get; internal set; }
    /// <summary>
    /// Starts of a run on another CPU than the previous run's, whether or not a migration was logged.
    /// </summary>
    public long CpuChanges { get; internal set; }
    public long WakeupsReceivedSameCpu { get; internal set; }
    public long WakeupsReceivedCrossCpu { get; internal set; }
    public long WakeupsGivenSameCpu { get; internal set; }
    public long WakeupsGivenCrossCpu { get; internal set; }
    /// <summary>Time runnable (woken or preempted, not yet running) while at least one CPU was idle.</summary>
    public long RunnableWhileIdleNs { get; internal set; }

    public long ResidencyOn(int cpu) => cpu >= 0 && cpu < _residency.Length ? _residency[cpu] : 0;

    internal void AddResidency(int cpu, long ns)
    {
        // Zero-length (e.g. clipped) runs must not grow the array: its length tells which CPUs the thread used.
        if (ns == 0) return;
        if (cpu >= _residency.Length) Array.Resize(ref _residency, cpu + 1);
        _residency[cpu] += ns;
    }

    internal void Reset()
    {
        Array.Clear(_residency);
        Migrations = CpuChanges = RunnableWhileIdleNs = 0;
        WakeupsReceivedSameCpu = WakeupsReceivedCrossCpu = WakeupsGivenSameCpu = WakeupsGivenCrossCpu = 0;
    }
}
