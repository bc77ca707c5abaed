using TraceLab.Reporting.Sections;

namespace TraceLab.Reporting.Findings;

/// <summary>
/// `lock-convoy`: an object whose lock travels through its wait queue in counted episodes. Severity: the reported
/// threads' time in convoys (queue wait + handoff gap), shared between objects by their convoy handoffs, less the
/// waits a more specific cause on the same object already explains (yield or sleep while holding, wake while
/// holding): those rules name why the queue formed, and one wait is not counted twice.
/// </summary>
public sealed class LockConvoyRule : IFindingRule
{
    public string Kind => "lock-convoy";

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (context.Report.Convoys is not { } convoys) yield break;
        var inConvoy = convoys.Objects.Where(o => o.Episodes > 0 && o.HandoffsInConvoys > 0).ToList();
        foreach (var o in inConvoy)
        {
            var threads = convoys.Threads
                .Where(t => context.Reported.Contains(t.Tid) && o.Participants.Contains(t.Tid)).ToList();
            double explained = 0;
            foreach (var t in threads)
            {
                // A thread in convoys on several objects: its convoy time is shared by the objects' convoy handoffs.
                var all = inConvoy.Where(x => x.Participants.Contains(t.Tid)).Sum(x => x.HandoffsInConvoys);
                explained += t.TimeInConvoyNs * (double)o.HandoffsInConvoys / all;
            }
            if (o.Kind == nameof(Analyzers.Locks.LockObjectKind.WakeChain))
            {
                yield return WakeChainFinding.Of(context, o, threads, explained);
                continue;
            }
            var causes = context.Evidence is null
                ? 0
                : ExplainedElsewhere(context, ObjectWindows.Find(context.Evidence, o.Object));
            yield return new FindingSection
            {
                Kind = Kind,
                Severity = FindingEngine.Round(context.Share(Math.Max(0, explained - causes))),
                Title = $"Lock convoy on {o.Object}: {EnglishCount.Of(o.HandoffsInConvoys, "handoff")} through the " +
                    $"wait queue in {EnglishCount.Of(o.Episodes, "episode")} (longest chain {o.LongestChain:N0}), " +
                    $"{o.ConvoyShareOfRegion:P0} of the region",
                Evidence =
                [
                    Figure.Of("convoys.objects[].episodes", o.Episodes),
                    Figure.Of("convoys.objects[].handoffsInConvoys", o.HandoffsInConvoys),
                    Figure.Of("convoys.objects[].longestChain", o.LongestChain),
                    Figure.Of("convoys.objects[].convoyShareOfRegion", o.ConvoyShareOfRegion),
                    Figure.Of("convoys.objects[].handoffGap.p50Ns", o.HandoffGap.P50Ns),
                    Figure.Of("convoys.threads[].timeInConvoyNs", threads.Sum(t => t.TimeInConvoyNs)),
                    Figure.Of("findings.evidence.explainedByCausesNs", causes),
                ],
                Threads = threads.Select(t => t.Tid).ToList(),
                Objects = [o.Object],
                Windows = context.Evidence is null
                    ? []
                    : FindingContext.Windows(ObjectWindows.Blocked(context.Evidence, o.Object)),
                Remedy = "Hold the lock for less time, or split it, so fewer threads queue on it; a lock that goes " +
                    "to whichever thread is running, taken in user space when free, does not pass through the queue " +
                    "(TM1); admitting no more threads at once than there are CPUs removes the queue (TM5). With " +
                    "kernel objects the convoy is the graceful case: it degrades less than a contended user-space " +
                    "lock (TM4).",
                Claims = ["TM1", "TM4", "TM5"],
            };
        }
    }

    private static long ExplainedElsewhere(FindingContext context, Analyzers.Findings.ObjectEvidence? o)
    {
        if (o is null) return 0;
        long Sum(Dictionary<int, long> d) => d.Where(kv => context.Reported.Contains(kv.Key)).Sum(kv => kv.Value);
        return Sum(o.WaitBehindDescheduledNs) + Sum(o.WaitBehindWakePreemptedNs) + Sum(o.WakeWhileHoldingNs);
    }
}
