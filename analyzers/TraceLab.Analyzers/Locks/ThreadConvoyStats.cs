namespace TraceLab.Analyzers.Locks;

/// <summary>
/// One thread's part in lock handoffs and convoys (the per-thread convoy report; docs/metrics.md#convoy-threads).
/// </summary>
public sealed class ThreadConvoyStats
{
    public ThreadConvoyStats(int tid) => Tid = tid;

    public int Tid { get; }
    public long HandoffsReceived { get; internal set; }
    public long HandoffsGiven { get; internal set; }
    /// <summary>Queue wait + ready latency of the handoffs this thread received inside convoy episodes.</summary>
    public long TimeInConvoyNs { get; internal set; }
    public long HandoffsReceivedInConvoys { get; internal set; }
    public long LostRaces { get; internal set; }
    /// <summary>Wait start → woken by the giver, per handoff received.</summary>
    public LatencyHistogram QueueWait { get; } = new();
    /// <summary>Woken by the giver → running, per handoff received.</summary>
    public LatencyHistogram ReadyLatency { get; } = new();
    /// <summary>Giver tid → handoffs received from it, in order of first handoff.</summary>
    public Dictionary<int, long> ReceivedFrom => ReceivedFromCounts.Counts;
    /// <summary>Receiver tid → handoffs given to it, in order of first handoff.</summary>
    public Dictionary<int, long> GivenTo => GivenToCounts.Counts;

    internal PartnerCounts ReceivedFromCounts { get; } = new();
    internal PartnerCounts GivenToCounts { get; } = new();

    /// <summary>
    /// The object whose <see cref="LockObjectStats.Participants"/> this thread was last added to: the analyzer skips
    /// the hash insert while it stays there. Reset together with the objects' sets (region begin).
    /// </summary>
    internal LockObjectStats? ParticipantOf;

    /// <summary>
    /// The object whose open convoy episode this thread's part is accumulated here for (see ConvoyAnalyzer).
    /// </summary>
    internal LockObjectStats? EpisodeOf;
    internal long EpisodeNs;
    internal long EpisodeHandoffs;

    internal void Reset()
    {
        HandoffsReceived = HandoffsGiven = TimeInConvoyNs = HandoffsReceivedInConvoys = LostRaces = 0;
        QueueWait.Clear();
        ReadyLatency.Clear();
        ReceivedFromCounts.Clear();
        GivenToCounts.Clear();
        ParticipantOf = null;
    }
}
