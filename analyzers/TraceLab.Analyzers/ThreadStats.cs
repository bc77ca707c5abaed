namespace TraceLab.Analyzers;

/// <summary>What the scheduler did with one thread over the measured region (definitions in docs/metrics.md).</summary>
public sealed class ThreadStats
{
    public ThreadStats(int tid) => Tid = tid;

    public int Tid { get; }
    public long RunNs { get; internal set; }
    public long ReadyNs { get; internal set; }
    public long WaitNs { get; internal set; }
    public long VoluntarySwitches { get; internal set; }
    public long InvoluntarySwitches { get; internal set; }
    public long Migrations { get; internal set; }
    public long WakeupsReceived { get; internal set; }
    public long WakeupsGiven { get; internal set; }
    /// <summary>Switch-ins whose start had to be estimated because the switch naming this thread was not logged.</summary>
    public long RepairedStarts { get; internal set; }
    /// <summary>Wakeup (or preemption) to running, for switch-ins that were logged.</summary>
    public LatencyHistogram ReadyLatency { get; } = new();
    /// <summary>Waker tid → wakeups; -1 stands for wakeups from interrupt context.</summary>
    public Dictionary<int, long> Wakers { get; } = new();

    internal void Reset()
    {
        RunNs = ReadyNs = WaitNs = 0;
        VoluntarySwitches = InvoluntarySwitches = Migrations = WakeupsReceived = WakeupsGiven = RepairedStarts = 0;
        Wakers.Clear();
        ReadyLatency.Clear();
    }
}
