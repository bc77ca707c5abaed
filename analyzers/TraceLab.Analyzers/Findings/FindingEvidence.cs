using TraceLab.Analyzers.Locks;

namespace TraceLab.Analyzers.Findings;

/// <summary>
/// What <see cref="FindingEvidenceAnalyzer"/> measured for the findings rules, beyond the other analyses' results
/// (definitions in docs/metrics.md, "Findings"). Plain data, so rules can be tested on hand-built evidence.
/// </summary>
public sealed class FindingEvidence
{
    public Dictionary<int, ThreadEvidence> Threads { get; init; } = [];
    public Dictionary<LockObject, ObjectEvidence> Objects { get; init; } = [];
    /// <summary>Holders descheduled with a lock held and the waits that began meanwhile, per bucket.</summary>
    public BucketSeries HoldingDescheduled { get; init; } = BucketSeries.Empty;
    /// <summary>Wake-while-holding cycles (woken → woken again by the release), per bucket.</summary>
    public BucketSeries WakeWhileHolding { get; init; } = BucketSeries.Empty;
    /// <summary>Runnable time after preemption by a higher-priority task, all threads, per bucket.</summary>
    public BucketSeries HigherPriorityReady { get; init; } = BucketSeries.Empty;
}

/// <summary>One thread's preemptions (docs/metrics.md, "Findings").</summary>
public sealed class ThreadEvidence
{
    public int Tid { get; init; }
    /// <summary>Involuntary switch-outs (R state) outside sched_yield, in the region.</summary>
    public long Preemptions { get; set; }
    /// <summary>Runnable from such a switch-out to the next switch-in, clipped to the region.</summary>
    public long PreemptedReadyNs { get; set; }
    /// <summary>Of <see cref="Preemptions"/>, those where the next task had a higher priority (lower prio
    /// number).</summary>
    public long HigherPriorityPreemptions { get; set; }
    /// <summary>Of <see cref="Preemptions"/>, those by a thread this one had woken since that thread last
    /// ran.</summary>
    public long WakePreemptions { get; set; }
    /// <summary>
    /// <see cref="PreemptedReadyNs"/> by the task that took the CPU, wake preemptions left out: lets a rule count
    /// only what the workload's own threads cost each other.
    /// </summary>
    public Dictionary<int, long> ReadyByPreemptor { get; init; } = [];
    public long HigherPriorityReadyNs { get; set; }
    /// <summary>Runnable from creation (sched_wakeup_new) to the first run, clipped to the region.</summary>
    public long StartReadyNs { get; set; }
    /// <summary><see cref="PreemptedReadyNs"/> and <see cref="StartReadyNs"/> per bucket.</summary>
    public BucketSeries PreemptedReady { get; set; } = BucketSeries.Empty;

    /// <summary>The region opened: what was counted before it is dropped.</summary>
    internal void ResetCounts()
    {
        Preemptions = PreemptedReadyNs = WakePreemptions = 0;
        HigherPriorityPreemptions = HigherPriorityReadyNs = 0;
        ReadyByPreemptor.Clear();
        StartReadyNs = 0;
    }
}

/// <summary>Evidence about one lock object (docs/metrics.md, "Findings").</summary>
public sealed class ObjectEvidence
{
    public required LockObject Object { get; init; }
    /// <summary>Per thread: time inside lock operations on the object during which it blocked (entry → exit,
    /// clipped).</summary>
    public Dictionary<int, long> BlockedNs { get; init; } = [];
    /// <summary>Lock operations on the object that blocked, exit in the region.</summary>
    public long BlockingWaits { get; set; }
    /// <summary>Threads whose operation on the object woke a waiter on it (a release that ended a wait).</summary>
    public HashSet<int> Releasers { get; init; } = [];
    /// <summary>Per holder: time descheduled (yield or sleep) with the object held, when a wait began
    /// meanwhile.</summary>
    public Dictionary<int, long> HolderDescheduledNs { get; init; } = [];
    /// <summary>Such deschedules (counted once each, however many waits began during it).</summary>
    public long DeschedulesWhileHolding { get; set; }
    /// <summary>Per waiter: wait (entry → woken) of the waits that began while the holder was descheduled.</summary>
    public Dictionary<int, long> WaitBehindDescheduledNs { get; init; } = [];
    /// <summary>Per woken thread: wake-while-holding cycles on this object (the lock it blocked on at once).</summary>
    public Dictionary<int, long> WakeWhileHoldingCycles { get; init; } = [];
    /// <summary>Per woken thread: time from the first wakeup to the wakeup by the release, summed over the
    /// cycles.</summary>
    public Dictionary<int, long> WakeWhileHoldingNs { get; init; } = [];
    /// <summary>
    /// Per holder: time preempted by the thread it had just woken (not by releasing this object) with the object
    /// held, when a wait on it began meanwhile; the second cost of waking while holding.
    /// </summary>
    public Dictionary<int, long> HolderWakePreemptedNs { get; init; } = [];
    public long WakePreemptionsWhileHolding { get; set; }
    /// <summary>Per waiter: waits behind such a preempted holder, from the later of their start and the
    /// preemption's.</summary>
    public Dictionary<int, long> WaitBehindWakePreemptedNs { get; init; } = [];
    /// <summary>The threads whose wakeup found the object held by themselves.</summary>
    public HashSet<int> WakeWhileHoldingWakers { get; init; } = [];
    /// <summary><see cref="BlockedNs"/> per bucket (all threads).</summary>
    public BucketSeries Blocked { get; set; } = BucketSeries.Empty;

    /// <summary>The region opened: what was counted before it is dropped.</summary>
    internal void ResetCounts()
    {
        BlockedNs.Clear();
        BlockingWaits = DeschedulesWhileHolding = WakePreemptionsWhileHolding = 0;
        HolderWakePreemptedNs.Clear();
        WaitBehindWakePreemptedNs.Clear();
        Releasers.Clear();
        HolderDescheduledNs.Clear();
        WaitBehindDescheduledNs.Clear();
        WakeWhileHoldingCycles.Clear();
        WakeWhileHoldingNs.Clear();
        WakeWhileHoldingWakers.Clear();
    }
}
