namespace TraceLab.Reporting.Findings;

/// <summary>
/// `serialization`: an object (a gate) the threads pass one at a time, each waiting far longer than a convoy
/// handoff: two or more reported threads, and at least half of them, blocked on it, released by two or more different
/// threads, waits averaging
/// at least <see cref="MinMeanWaitNs"/>, the waiters blocked on it at least <see cref="MinWaitersBlockedShare"/> of
/// their time, and no convoy episode on it. Severity: the reported threads' time blocked on it.
/// </summary>
public sealed class SerializationRule : IFindingRule
{
    /// <summary>The convoy analysis's longest hold (ConvoyAnalyzer.MaxHoldNs): longer waits are not handoff
    /// costs.</summary>
    public const long MinMeanWaitNs = 1_000_000;
    /// <summary>The waiters' blocked time on it ÷ their thread time, at least: they spend most of their time behind
    /// it.</summary>
    public const double MinWaitersBlockedShare = 0.5;

    public string Kind => "serialization";

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (context.Evidence is not { } evidence) yield break;
        foreach (var o in evidence.Objects.Values.OrderBy(o => o.Object.ToString(), StringComparer.Ordinal))
        {
            var name = o.Object.ToString();
            var waiters = o.BlockedNs.Where(kv => context.Reported.Contains(kv.Key) && kv.Value > 0)
                .Select(kv => kv.Key).Order().ToList();
            var releasers = o.Releasers.Count;
            // "Everything waits on it": at least half of the reported threads blocked on it.
            if (waiters.Count < 2 || 2 * waiters.Count < context.Reported.Count || releasers < 2
                || o.BlockingWaits == 0)
                continue;
            var blocked = waiters.Sum(t => o.BlockedNs[t]);
            var mean = (double)o.BlockedNs.Values.Sum() / o.BlockingWaits;
            if (mean < MinMeanWaitNs) continue;
            if (context.Report.Convoys?.Objects.FirstOrDefault(x => x.Object == name) is { Episodes: > 0 }) continue;
            var waitersTime = context.Report.Threads.Where(t => waiters.Contains(t.Tid))
                .Sum(t => t.RunNs + t.ReadyNs + t.WaitNs);
            var blockedShare = waitersTime > 0 ? (double)blocked / waitersTime : 0;
            if (blockedShare < MinWaitersBlockedShare) continue;
            var evidenceFigures = new List<FindingFigure>
            {
                Figure.Of("findings.evidence.blockedNs", blocked),
                Figure.Of("findings.evidence.blockingWaits", o.BlockingWaits),
                Figure.Of("findings.evidence.meanBlockedNs", mean),
                Figure.Of("findings.evidence.releasers", releasers),
                Figure.Of("findings.evidence.waitersBlockedShare", blockedShare),
            };
            if (context.Report.WaitGraph?.Knots.FirstOrDefault(k => k.IsSink && waiters.All(k.Vertices.Contains))
                is { } knot)
                evidenceFigures.Add(Figure.Of("waitGraph.knots[].shareOfWait", knot.ShareOfWait));
            yield return new FindingSection
            {
                Kind = Kind,
                Severity = FindingEngine.Round(context.Share(blocked)),
                Title = $"Serialization on {name}: {EnglishCount.Of(waiters.Count, "thread")} passed it one at a " +
                    "time, " +
                    $"blocked {blocked / 1e6:0.#} ms in {EnglishCount.Of(o.BlockingWaits, "wait")} " +
                    $"({mean / 1e6:0.#} ms each on average)",
                Evidence = evidenceFigures,
                Threads = waiters,
                Objects = [name],
                Windows = FindingContext.Windows(o.Blocked),
                Remedy = "The threads behind this object run one after another, so adding threads adds no speed. If " +
                    "it is a gate limiting the active threads, admit as many as there are CPUs (one active thread is " +
                    "best only when they all fight over one critical section, TM5); otherwise shorten what is done " +
                    "while holding it, or split it.",
                Claims = ["TM5"],
            };
        }
    }
}
