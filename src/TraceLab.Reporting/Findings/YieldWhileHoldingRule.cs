namespace TraceLab.Reporting.Findings;

/// <summary>
/// `yield-while-holding` (TM6): a holder yielded or slept with the lock held while another thread queued on it.
/// Severity: the holders' descheduled time plus the waits that began meanwhile, over the reported threads.
/// </summary>
public sealed class YieldWhileHoldingRule : IFindingRule
{
    public string Kind => "yield-while-holding";

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (context.Evidence is not { } evidence) yield break;
        var objects = evidence.Objects.Values.Where(o => o.DeschedulesWhileHolding > 0)
            .OrderBy(o => o.Object.ToString(), StringComparer.Ordinal);
        foreach (var o in objects)
        {
            var holderNs = o.HolderDescheduledNs.Where(kv => context.Reported.Contains(kv.Key)).Sum(kv => kv.Value);
            var waiterNs = o.WaitBehindDescheduledNs.Where(kv => context.Reported.Contains(kv.Key)).Sum(kv => kv.Value);
            var threads = o.HolderDescheduledNs.Keys.Concat(o.WaitBehindDescheduledNs.Keys)
                .Where(context.Reported.Contains).Distinct().Order().ToList();
            var yields = context.Report.Kernel?.Threads.Where(t => threads.Contains(t.Tid))
                .SelectMany(t => t.Syscalls).Where(s => s.Name == "sched_yield").Sum(s => s.Calls) ?? 0;
            var name = o.Object.ToString();
            yield return new FindingSection
            {
                Kind = Kind,
                Severity = FindingEngine.Round(context.Share(holderNs + waiterNs)),
                Title = $"Yield or sleep while holding {name}: " +
                    $"{EnglishCount.Of(o.DeschedulesWhileHolding, "time")} the holder " +
                    "gave up " +
                    "the CPU with the lock held and another thread queued on it meanwhile",
                Evidence =
                [
                    Figure.Of("findings.evidence.deschedulesWhileHolding", o.DeschedulesWhileHolding),
                    Figure.Of("findings.evidence.holderDescheduledNs", holderNs),
                    Figure.Of("findings.evidence.waitBehindDescheduledNs", waiterNs),
                    Figure.Of("kernel.threads[].syscalls[].calls (sched_yield)", yields),
                ],
                Threads = threads,
                Objects = [name],
                Windows = FindingContext.Windows(evidence.HoldingDescheduled),
                Remedy = "Do not yield, sleep or block while holding the lock: every thread that needs it then waits " +
                    "for the holder to be scheduled again. Move the yield (or the blocking call) after the release, " +
                    "where it costs almost nothing (TM6).",
                Claims = ["TM6"],
            };
        }
    }
}
