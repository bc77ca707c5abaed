using System.Runtime.InteropServices;

namespace TraceLab.Analyzers.Locks;

/// <summary>
/// <see cref="ConvoyAnalyzer"/>'s accounting of confirmed handoffs: per object and per thread, and the convoy episodes
/// they chain into (docs/metrics.md#lock-convoys, #episodes). Knows nothing of how a handoff was found (a lock
/// operation, an inferred wait or a wake chain): it is told each one.
/// </summary>
internal sealed class ConvoyLedger
{
    private readonly MeasuredRegion _region;
    private readonly ThreadSlots _slots;
    private readonly Dictionary<LockObject, ConvoyObject> _objects = new();
    /// <summary>The object looked up last: a contended lock's events name the same object over and over.</summary>
    private ConvoyObject? _lastObject;
    private SlotTable<ThreadConvoyStats> _stats = new(static (tid, _) => new ThreadConvoyStats(tid));
    /// <summary>An array, not a list: looping over none (the usual case) costs nothing per handoff.</summary>
    private IConvoyObserver[] _observers = [];

    public ConvoyLedger(MeasuredRegion region, ThreadSlots slots)
    {
        _region = region;
        _slots = slots;
    }

    public IEnumerable<LockObjectStats> Objects => _objects.Values.Select(o => o.Stats);
    public IReadOnlyDictionary<int, ThreadConvoyStats> Threads => _stats.ByTid;

    public void AddObserver(IConvoyObserver observer) => _observers = [.. _observers, observer];

    public ThreadConvoyStats Stats(int slot, int tid) => _stats.At(slot, tid);

    private ThreadConvoyStats Stats(int tid) => _stats.At(_slots.SlotOf(tid), tid);

    public ConvoyObject Object(in LockObject obj)
    {
        if (_lastObject is { } last && last.Stats.Object == obj) return last;
        if (!_objects.TryGetValue(obj, out var o))
        {
            _objects[obj] = o = new ConvoyObject(obj);
            if (obj.Kind == LockObjectKind.SysVSemaphore) o.Stats.Acquisitions = 0;
        }
        _lastObject = o;
        return o;
    }

    /// <param name="receiverSlot">Slot of <see cref="Handoff.Receiver"/>.</param>
    /// <param name="giverSlot">Slot of <see cref="Handoff.Giver"/>.</param>
    public void Confirm(in Handoff h, int receiverSlot, int giverSlot)
    {
        var o = Object(h.Object);
        var inRegion = _region.Contains(h.WokenAt);
        foreach (var observer in _observers) observer.OnHandoff(h, inRegion);
        ThreadConvoyStats? r = null;
        if (inRegion)
        {
            var s = o.Stats;
            s.Handoffs++;
            var gap = h.GapNs;
            var queueWait = h.QueueWaitNs;
            s.HandoffGap.Add(gap);
            s.QueueWait.Add(queueWait);
            r = _stats.At(receiverSlot, h.Receiver);
            var g = _stats.At(giverSlot, h.Giver);
            // Giver first, then receiver (the set's order); skipped when the thread was last added to this set.
            if (g.ParticipantOf != s)
            {
                s.Participants.Add(h.Giver);
                g.ParticipantOf = s;
            }
            if (r.ParticipantOf != s)
            {
                s.Participants.Add(h.Receiver);
                r.ParticipantOf = s;
            }
            // A wake chain is a lock only when its handoffs chain into counted episodes (docs/metrics.md#wake-chains):
            // its threads get only their time in those episodes, not a lock wait per handoff.
            if (h.Object.Kind != LockObjectKind.WakeChain)
            {
                r.HandoffsReceived++;
                r.QueueWait.Add(queueWait);
                r.ReadyLatency.Add(gap);
                r.ReceivedFromCounts.Add(h.Giver);
                g.HandoffsGiven++;
                g.GivenToCounts.Add(h.Receiver);
            }
        }

        if (o.EpisodeCount > 0 && h.Giver == o.LastReceiver && !o.FastSinceHandoff
            && h.WokenAt - o.EpisodeEnd <= o.MaxHoldNs)
        {
            o.EpisodeCount++;
            o.EpisodeEnd = h.RunningAt;
        }
        else
        {
            CloseEpisode(o);
            o.EpisodeCount = 1;
            o.EpisodeStart = h.WokenAt;
            o.EpisodeEnd = h.RunningAt;
        }
        o.LastReceiver = h.Receiver;
        o.FastSinceHandoff = false;
        if (r is not null) AddEpisodeTime(o, r, h);
    }

    /// <summary>Keeps the receiver's convoy time of <paramref name="h"/> until the open episode qualifies.</summary>
    private void AddEpisodeTime(ConvoyObject o, ThreadConvoyStats r, in Handoff h)
    {
        var ns = _region.Overlap(h.QueuedAt, h.RunningAt);
        if (r.EpisodeOf == o.Stats)
        {
            r.EpisodeNs += ns;
            r.EpisodeHandoffs++;
        }
        else if (r.EpisodeOf is null)
        {
            r.EpisodeOf = o.Stats;
            r.EpisodeNs = ns;
            r.EpisodeHandoffs = 1;
            o.Members.Add(r);
        }
        else
        {
            ref var m = ref CollectionsMarshal.GetValueRefOrAddDefault(o.EpisodeMembers, h.Receiver, out _);
            m = (m.Ns + ns, m.Handoffs + 1);
        }
    }

    private void CloseEpisode(ConvoyObject o)
    {
        if (o.EpisodeCount >= ConvoyAnalyzer.MinEpisodeHandoffs)
        {
            var s = o.Stats;
            var ns = _region.Overlap(o.EpisodeStart, o.EpisodeEnd);
            if (ns > 0 || _region.Contains(o.EpisodeStart))
            {
                s.Episodes++;
                s.ConvoyNs += ns;
                s.LongestChain = Math.Max(s.LongestChain, o.EpisodeCount);
                foreach (var observer in _observers)
                    observer.OnEpisode(new ConvoyEpisode(s.Object, o.EpisodeStart, o.EpisodeEnd, o.EpisodeCount));
                foreach (var st in o.Members)
                {
                    st.TimeInConvoyNs += st.EpisodeNs;
                    st.HandoffsReceivedInConvoys += st.EpisodeHandoffs;
                    s.HandoffsInConvoys += st.EpisodeHandoffs;
                }
                foreach (var (tid, m) in o.EpisodeMembers)
                {
                    var st = Stats(tid);
                    st.TimeInConvoyNs += m.Ns;
                    st.HandoffsReceivedInConvoys += m.Handoffs;
                    s.HandoffsInConvoys += m.Handoffs;
                }
            }
        }
        o.EpisodeCount = 0;
        o.ClearMembers();
    }

    /// <summary>The region opened: what was counted before it is dropped.</summary>
    public void OnRegionBegin()
    {
        foreach (var o in _objects.Values)
        {
            o.Stats.Reset();
            o.EpisodeCount = 0;
            o.ClearMembers();
        }
        foreach (var s in _stats.ByTid.Values) s.Reset();
    }

    /// <summary>
    /// The earliest start, at or before <paramref name="until"/>, of an open episode whose report is not settled:
    /// one a handoff could still extend (the next can wake no earlier than <paramref name="nextWake"/>), or, when
    /// several settled ones would be reported, any of them (which is reported first depends on later handoffs);
    /// <see cref="long.MaxValue"/> when none. A single settled one is reported as it is now, after every episode
    /// reported so far, whenever it closes.
    /// </summary>
    public long EarliestUnsettledEpisode(long until, long nextWake)
    {
        long earliest = long.MaxValue, settledEarliest = long.MaxValue;
        var settled = 0;
        foreach (var o in _objects.Values)
        {
            if (o.EpisodeCount == 0 || o.EpisodeStart > until) continue;
            if (o.EpisodeEnd + o.MaxHoldNs >= nextWake) earliest = Math.Min(earliest, o.EpisodeStart);
            else if (o.EpisodeCount >= ConvoyAnalyzer.MinEpisodeHandoffs)
            {
                settled++;
                settledEarliest = Math.Min(settledEarliest, o.EpisodeStart);
            }
        }

        return settled > 1 ? Math.Min(earliest, settledEarliest) : earliest;
    }

    /// <summary>Closes every open episode (end of the trace).</summary>
    public void Complete()
    {
        foreach (var o in _objects.Values) CloseEpisode(o);
    }
}

/// <summary>One lock object in <see cref="ConvoyLedger"/>: its statistics and its open convoy episode.</summary>
internal sealed class ConvoyObject
{
    public ConvoyObject(LockObject obj) => Stats = new LockObjectStats(obj);
    public readonly LockObjectStats Stats;
    /// <summary>
    /// Longest hold that keeps an episode going (<see cref="ConvoyAnalyzer.MaxHoldNs"/>, or a wake chain's).
    /// </summary>
    public long MaxHoldNs = ConvoyAnalyzer.MaxHoldNs;
    public int EpisodeCount;
    public long EpisodeStart;
    public long EpisodeEnd;
    public int LastReceiver;
    public bool FastSinceHandoff;
    /// <summary>
    /// Receivers whose convoy time in the open episode is kept on their own stats
    /// (<see cref="ThreadConvoyStats.EpisodeOf"/> is this object): no hashing per handoff. A receiver already
    /// counting for another object's open episode goes to
    /// <see cref="EpisodeMembers"/> instead; a thread may be in both, its two parts add up.
    /// </summary>
    public readonly List<ThreadConvoyStats> Members = [];
    /// <summary>Receiver → its convoy time in the open episode, credited when the episode qualifies.</summary>
    public readonly Dictionary<int, (long Ns, long Handoffs)> EpisodeMembers = new();

    /// <summary>Forgets the open episode's members (after crediting them, or when it does not qualify).</summary>
    public void ClearMembers()
    {
        foreach (var m in Members)
        {
            m.EpisodeOf = null;
            m.EpisodeNs = m.EpisodeHandoffs = 0;
        }
        Members.Clear();
        EpisodeMembers.Clear();
    }
}
