namespace TraceLab.Analyzers.Locks;

/// <summary>
/// One lock object's contention over the measured region (definitions in docs/metrics.md#lock-convoys).
/// </summary>
public sealed class LockObjectStats
{
    public LockObjectStats(LockObject obj) => Object = obj;

    public LockObject Object { get; }
    /// <summary>What the report calls the object when its kernel name says too little (a wake chain's wait).</summary>
    public string? Name { get; internal set; }
    public long Handoffs { get; internal set; }
    /// <summary>Handoffs that belong to convoy episodes.</summary>
    public long HandoffsInConvoys { get; internal set; }
    /// <summary>Lock operations that blocked (the thread switched out inside them).</summary>
    public long BlockingWaits { get; internal set; }
    /// <summary>
    /// All acquisitions, fast path included, when the trace shows them (System V semaphores: every semop is a syscall);
    /// null for futexes, whose uncontended acquisitions never enter the kernel.
    /// </summary>
    public long? Acquisitions { get; internal set; }
    /// <summary>Acquisitions that did not wait (semaphores only).</summary>
    public long FastAcquisitions { get; internal set; }
    /// <summary>
    /// Waiters woken by a release of this object that found it taken and waited on it again (futex barging).
    /// </summary>
    public long LostRaces { get; internal set; }
    public long Episodes { get; internal set; }
    public long ConvoyNs { get; internal set; }
    public long LongestChain { get; internal set; }
    /// <summary>
    /// Wake chains: Σ over the releases of a blocked waiter by a peer of its time blocked in that wait, clipped to
    /// the region (docs/metrics.md#wake-chain-queued); lost races included.
    /// </summary>
    public long PeerReleasedWaitNs { get; internal set; }
    /// <summary>
    /// Wake chains with blocking stacks: the call site under which most of <see cref="PeerReleasedWaitNs"/> blocked
    /// (docs/metrics.md#wake-chain-call-site); null without stacks.
    /// </summary>
    public string? CallSite { get; internal set; }
    /// <summary>The share of <see cref="PeerReleasedWaitNs"/> that blocked under <see cref="CallSite"/>.</summary>
    public double? CallSiteShare { get; internal set; }
    public LatencyHistogram HandoffGap { get; } = new();
    public LatencyHistogram QueueWait { get; } = new();
    public HashSet<int> Participants { get; } = [];
    public HashSet<int> Waiters { get; } = [];

    internal void Reset()
    {
        Handoffs = HandoffsInConvoys = BlockingWaits = FastAcquisitions = LostRaces = Episodes = ConvoyNs =
            LongestChain = 0;
        PeerReleasedWaitNs = 0;
        if (Acquisitions is not null) Acquisitions = 0;
        HandoffGap.Clear();
        QueueWait.Clear();
        Participants.Clear();
        Waiters.Clear();
    }
}
