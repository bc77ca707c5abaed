using TraceLab.Analyzers;
using TraceLab.Analyzers.Locks;
using TraceLab.Core;

namespace TraceLab.Reporting.Sections;

/// <summary>report.json "convoys": lock handoffs and convoy episodes per object and per thread.</summary>
public sealed class ConvoySection
{
    /// <summary>
    /// "syscalls" (objects named by futex/semop/read syscalls) or "inferred" (no lock syscalls in the trace).
    /// </summary>
    public required string ObjectSource { get; init; }
    public int MinEpisodeHandoffs { get; init; }
    public long UnconfirmedHandoffs { get; init; }
    public List<LockObjectSection> Objects { get; init; } = [];
    /// <summary>
    /// Objects left out of <see cref="Objects"/> because most of their blocked time was not a lock wait (condition,
    /// timed out: docs/metrics.md#wait-classes); null when none was.
    /// </summary>
    public int? EventObjects { get; init; }
    public List<ConvoyThreadSection> Threads { get; init; } = [];
}

public sealed class LockObjectSection
{
    public required string Object { get; init; }
    public required string Kind { get; init; }
    public long Handoffs { get; init; }
    public double HandoffsPerSecond { get; init; }
    public long? Acquisitions { get; init; }
    /// <summary>Handoffs / acquisitions; null when acquisitions are not visible (futex fast path).</summary>
    public double? HandoffShare { get; init; }
    public long FastAcquisitions { get; init; }
    public long BlockingWaits { get; init; }
    public long LostRaces { get; init; }
    public long Episodes { get; init; }
    public long HandoffsInConvoys { get; init; }
    public long ConvoyNs { get; init; }
    /// <summary>Convoy time / region duration.</summary>
    public double ConvoyShareOfRegion { get; init; }
    public long LongestChain { get; init; }
    public required LatencySection HandoffGap { get; init; }
    public required LatencySection QueueWait { get; init; }
    /// <summary>
    /// Wake chains only (null otherwise): the time its waiters spent blocked in waits a peer ended, lost races
    /// included (docs/metrics.md#wake-chain-queued).
    /// </summary>
    public long? QueuedNs { get; init; }
    /// <summary>
    /// Wake chains whose waits carried blocking stacks (null otherwise): the call site under which most of
    /// <see cref="QueuedNs"/> blocked, innermost first (docs/metrics.md#wake-chain-call-site).
    /// </summary>
    public string? CallSite { get; init; }
    /// <summary>The share of <see cref="QueuedNs"/> that blocked under <see cref="CallSite"/>.</summary>
    public double? CallSiteShare { get; init; }
    public List<int> Participants { get; init; } = [];
}

public sealed class ConvoyThreadSection
{
    public int Tid { get; init; }
    public required string Name { get; init; }
    public long TimeInConvoyNs { get; init; }
    public long HandoffsReceived { get; init; }
    public long HandoffsReceivedInConvoys { get; init; }
    public long HandoffsGiven { get; init; }
    public long LostRaces { get; init; }
    public required LatencySection QueueWait { get; init; }
    public required LatencySection ReadyLatency { get; init; }
    public List<WakerSection> ReceivedFrom { get; init; } = [];
    public List<WakerSection> GivenTo { get; init; } = [];
}

internal static class ConvoySectionBuilder
{
    private const int TopPartners = 3;

    /// <param name="notALock">
    /// Objects the wait classification found to be events, not locks (docs/metrics.md#wait-classes): left out of the
    /// table, and counted in <see cref="ConvoySection.EventObjects"/>. Null: every object is listed.
    /// </param>
    public static ConvoySection Build(ConvoyAnalyzer c, IReadOnlyList<int> tids, ThreadTable names, long regionNs,
        Func<LockObjectStats, bool>? notALock = null)
    {
        var selected = tids.ToHashSet();
        var seconds = regionNs / 1e9;
        var shown = c.Objects
            .Where(o => o.Handoffs + o.BlockingWaits + o.LostRaces > 0
                && (SetOverlap.Any(o.Participants, selected) || SetOverlap.Any(o.Waiters, selected)))
            // A wake chain is a lock only when its handoffs chain (docs/metrics.md#wake-chains).
            .Where(o => o.Object.Kind != LockObjectKind.WakeChain || o.Episodes > 0)
            .ToList();
        var events = notALock is null ? 0 : shown.RemoveAll(o => notALock(o));
        var objects = shown
            .OrderByDescending(o => o.Handoffs).ThenByDescending(o => o.BlockingWaits)
                .ThenBy(o => o.Object.ToString(), StringComparer.Ordinal)
            .Select(o => new LockObjectSection
            {
                Object = o.Name ?? o.Object.ToString(),
                Kind = o.Object.Kind.ToString(),
                Handoffs = o.Handoffs,
                HandoffsPerSecond = seconds > 0 ? Math.Round(o.Handoffs / seconds, 1) : 0,
                Acquisitions = o.Acquisitions,
                QueuedNs = o.Object.Kind == LockObjectKind.WakeChain ? o.PeerReleasedWaitNs : null,
                CallSite = o.CallSite,
                CallSiteShare = o.CallSiteShare is { } share ? Math.Round(share, 4) : null,
                HandoffShare = o.Acquisitions is > 0 ? Math.Round((double)o.Handoffs / o.Acquisitions.Value, 4) : null,
                FastAcquisitions = o.FastAcquisitions,
                BlockingWaits = o.BlockingWaits,
                LostRaces = o.LostRaces,
                Episodes = o.Episodes,
                HandoffsInConvoys = o.HandoffsInConvoys,
                ConvoyNs = o.ConvoyNs,
                ConvoyShareOfRegion = regionNs > 0 ? Math.Round((double)o.ConvoyNs / regionNs, 4) : 0,
                LongestChain = o.LongestChain,
                HandoffGap = LatencySection.From(o.HandoffGap),
                QueueWait = LatencySection.From(o.QueueWait),
                Participants = o.Participants.Order().ToList(),
            }).ToList();
        var threads = tids.Select(tid =>
        {
            var s = c.Threads.GetValueOrDefault(tid) ?? new ThreadConvoyStats(tid);
            return new ConvoyThreadSection
            {
                Tid = tid,
                Name = names.NameOf(tid),
                TimeInConvoyNs = s.TimeInConvoyNs,
                HandoffsReceived = s.HandoffsReceived,
                HandoffsReceivedInConvoys = s.HandoffsReceivedInConvoys,
                HandoffsGiven = s.HandoffsGiven,
                LostRaces = s.LostRaces,
                QueueWait = LatencySection.From(s.QueueWait),
                ReadyLatency = LatencySection.From(s.ReadyLatency),
                ReceivedFrom = Top(s.ReceivedFrom, names),
                GivenTo = Top(s.GivenTo, names),
            };
        }).ToList();
        return new ConvoySection
        {
            ObjectSource = c.SawLockSyscalls ? "syscalls" : "inferred",
            MinEpisodeHandoffs = ConvoyAnalyzer.MinEpisodeHandoffs,
            UnconfirmedHandoffs = c.UnconfirmedHandoffs,
            Objects = objects,
            EventObjects = events > 0 ? events : null,
            Threads = threads,
        };
    }

    private static List<WakerSection> Top(Dictionary<int, long> counts, ThreadTable names) =>
        counts.OrderByDescending(kv => kv.Value).ThenBy(kv => kv.Key).Take(TopPartners)
            .Select(kv => new WakerSection { Tid = kv.Key, Name = names.NameOf(kv.Key), Count = kv.Value }).ToList();
}
