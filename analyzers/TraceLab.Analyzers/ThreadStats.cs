namespace TraceLab.Analyzers;

/// <summary>
/// What the scheduler did with one thread over the measured region (definitions in docs/metrics.md#threads).
/// </summary>
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
    /// <summary>
    /// Switch-ins whose start had to be estimated because the switch naming this thread was not logged.
    /// </summary>
    public long RepairedStarts { get; internal set; }
    /// <summary>Wakeup (or preemption) to running, for switch-ins that were logged.</summary>
    public LatencyHistogram ReadyLatency { get; } = new();
    /// <summary>
    /// Waker tid → wakeups; -1 stands for wakeups from interrupt context. Keys in order of first wakeup.
    /// </summary>
    public Dictionary<int, long> Wakers => _wakers.Counts;

    // A thread is usually woken by the same few threads: the partner cache makes most wakeups an index, a compare and
    // an increment.
    private readonly PartnerCounts _wakers = new();

    /// <summary>One wakeup of this thread by <paramref name="waker"/> (a tid, or -1 for interrupt context).</summary>
    internal void AddWakeup(int waker) => _wakers.Add(waker);

    internal void Reset()
    {
        RunNs = ReadyNs = WaitNs = 0;
        VoluntarySwitches = InvoluntarySwitches = Migrations = WakeupsReceived = WakeupsGiven = RepairedStarts = 0;
        _wakers.Clear();
        ReadyLatency.Clear();
    }
}
