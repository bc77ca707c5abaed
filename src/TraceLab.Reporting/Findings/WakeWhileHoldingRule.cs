namespace TraceLab.Reporting.Findings;

/// <summary>
/// `wake-while-holding` (SR1): a thread woke another while holding a lock. Two costs, both counted: the woken thread
/// blocked on the lock at once (cycles: from the wakeup to the end of that wait), and the woken thread took the
/// waker's CPU while the waker still held the lock, so threads that queued on it meanwhile waited behind a holder that
/// was not running. Severity: the cycles, the holders' time so preempted and those waits.
/// </summary>
public sealed class WakeWhileHoldingRule : IFindingRule
{
    /// <summary>Fewer cycles than this are accidents of timing, not a pattern.</summary>
    public const long MinCycles = 10;

    public string Kind => "wake-while-holding";

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (context.Evidence is not { } evidence) yield break;
        foreach (var o in evidence.Objects.Values.OrderBy(o => o.Object.ToString(), StringComparer.Ordinal))
        {
            var woken = o.WakeWhileHoldingCycles.Where(kv => context.Reported.Contains(kv.Key))
                .Select(kv => kv.Key).Order().ToList();
            var cycles = woken.Sum(t => o.WakeWhileHoldingCycles[t]);
            if (cycles < MinCycles && o.WakePreemptionsWhileHolding < MinCycles) continue;
            var ns = woken.Sum(t => o.WakeWhileHoldingNs.GetValueOrDefault(t));
            var holderNs = o.HolderWakePreemptedNs.Where(kv => context.Reported.Contains(kv.Key)).Sum(kv => kv.Value);
            var behindNs = o.WaitBehindWakePreemptedNs.Where(kv => context.Reported.Contains(kv.Key))
                .Sum(kv => kv.Value);
            var behind = o.WaitBehindWakePreemptedNs.Keys.Where(context.Reported.Contains);
            var futile = context.Report.Wakeups?.Threads.Where(t => woken.Contains(t.Tid)).ToList() ?? [];
            var wakers = o.WakeWhileHoldingWakers.Where(context.Reported.Contains).Order().ToList();
            var name = o.Object.ToString();
            yield return new FindingSection
            {
                Kind = Kind,
                Severity = FindingEngine.Round(context.Share(ns + holderNs + behindNs)),
                Title = $"Wake while holding {name}: " +
                    $"{(woken.Count == 0 ? "threads" : string.Join(", ", woken.Select(context.NameOf)))} " +
                    $"woken {EnglishCount.Times(cycles)} by a thread that still held the lock and blocked on it " +
                    "at once; " +
                    "the holder, " +
                    "preempted by the thread it woke, kept others waiting " +
                    EnglishCount.Times(o.WakePreemptionsWhileHolding),
                Evidence =
                [
                    Figure.Of("findings.evidence.wakeWhileHoldingCycles", cycles),
                    Figure.Of("findings.evidence.wakeWhileHoldingNs", ns),
                    Figure.Of("findings.evidence.wakePreemptionsWhileHolding", o.WakePreemptionsWhileHolding),
                    Figure.Of("findings.evidence.holderWakePreemptedNs", holderNs),
                    Figure.Of("findings.evidence.waitBehindWakePreemptedNs", behindNs),
                    Figure.Of("wakeups.threads[].futile", futile.Sum(t => t.Futile)),
                    Figure.Of("wakeups.threads[].wakeups", futile.Sum(t => t.Wakeups)),
                ],
                Threads = woken.Concat(wakers).Concat(behind).Distinct().Order().ToList(),
                Objects = [name],
                Windows = FindingContext.Windows(evidence.WakeWhileHolding),
                Remedy = "Signal after leaving the lock, not inside it: the woken thread then finds the lock free " +
                    "instead of paying two context switches to wait for it (SR1, SR2). Where the shared state allows " +
                    "it, an interlocked update needs no lock at all and the switches disappear (SR3).",
                Claims = ["SR1", "SR2", "SR3"],
            };
        }
    }
}
