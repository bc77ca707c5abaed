namespace TraceLab.Analyzers.Wakeups;

/// <summary>What became of one thread's wakeups over the measured region (docs/metrics.md#wakeups).</summary>
public sealed class WakeupStats
{
    public WakeupStats(int tid) => Tid = tid;

    public int Tid { get; }
    /// <summary>
    /// Wakeups of this thread from a blocked state whose outcome is known (it blocked again, or the trace ended).
    /// </summary>
    public long Wakeups { get; internal set; }
    /// <summary>Woken, then blocked again without progress (see <see cref="WakeupAnalyzer.FutileCpuNs"/>).</summary>
    public long Futile { get; internal set; }
    /// <summary>Wakeups of a thread that was already running or runnable.</summary>
    public long Spurious { get; internal set; }
    /// <summary>Wakeup → running, when it ran on the CPU the wakeup was issued from.</summary>
    public LatencyHistogram SameCpuLatency { get; } = new();
    /// <summary>Wakeup → running, when it ran on another CPU than the waker's.</summary>
    public LatencyHistogram CrossCpuLatency { get; } = new();

    internal void Reset()
    {
        Wakeups = Futile = Spurious = 0;
        SameCpuLatency.Clear();
        CrossCpuLatency.Clear();
    }
}
