using TraceLab.Reporting.Sections;

namespace TraceLab.Reporting.Findings;

/// <summary>
/// `lock-convoy` on a lock found through its wake chain (docs/metrics.md#wake-chains): the waiters take turns,
/// each parked on an object of its own until the previous holder releases it. Severity: the chain's queued time
/// over the reported threads' time; the title adds it over the participating threads' own time
/// (docs/metrics.md#wake-chain-share), the figure to compare with a server's own wait accounting.
/// </summary>
internal static class WakeChainFinding
{
    public static FindingSection Of(FindingContext context, LockObjectSection o, List<ConvoyThreadSection> threads,
        double explainedNs)
    {
        var participants = threads.Select(t => t.Tid).ToHashSet();
        var ownNs = context.Report.Threads.Where(t => participants.Contains(t.Tid))
            .Sum(t => t.RunNs + t.ReadyNs + t.WaitNs);
        // The chain's own queued time: a backend in two chains (its row lock and an LWLock) has one time in
        // convoys, which the shared rule would split between them by handoff counts.
        var queuedNs = o.QueuedNs ?? explainedNs;
        var share = ownNs > 0 ? Math.Clamp(queuedNs / ownNs, 0, 1) : 0;
        return new FindingSection
        {
            Kind = "lock-convoy",
            Severity = FindingEngine.Round(context.Share(queuedNs)),
            Title = $"Threads queue behind one another on {o.Object}: " +
                $"{EnglishCount.Of(o.HandoffsInConvoys, "handoff")} from each holder to the next waiter in " +
                $"{EnglishCount.Of(o.Episodes, "episode")} (longest chain {o.LongestChain:N0}); waiting in the queue " +
                $"is {share:P0} of the {EnglishCount.Of(participants.Count, "participating thread")}' time",
            Evidence =
            [
                Figure.Of("convoys.objects[].episodes", o.Episodes),
                Figure.Of("convoys.objects[].handoffsInConvoys", o.HandoffsInConvoys),
                Figure.Of("convoys.objects[].longestChain", o.LongestChain),
                Figure.Of("convoys.objects[].lostRaces", o.LostRaces),
                Figure.Of("convoys.objects[].queueWait.p50Ns", o.QueueWait.P50Ns),
                Figure.Of("convoys.threads[].timeInConvoyNs", threads.Sum(t => t.TimeInConvoyNs)),
                Figure.Of("convoys.objects[].queuedNs", queuedNs),
                Figure.Of("findings.wakeChainShareOfThreads", share),
            ],
            Threads = threads.Select(t => t.Tid).ToList(),
            Objects = [o.Object],
            Remedy = "The work under this lock runs one thread at a time, however many wait: each waiter sleeps on " +
                "a latch or semaphore of its own until the previous holder releases it. Hold it for less time " +
                "(in a database: commit sooner, update the contended row last in the transaction), spread what " +
                "every thread updates over several objects (one hot row or counter serializes all writers), or " +
                "admit no more workers to the contended object than there are CPUs (a smaller connection pool; " +
                "TM5).",
            Claims = ["TM5"],
        };
    }
}
