namespace TraceLab.Reporting.Findings;

/// <summary>
/// `priority-preemption` (TM7): the reported threads were preempted by higher-priority tasks (a lower prio number
/// in sched_switch) and waited for the CPU behind them. Severity: that runnable time.
/// </summary>
public sealed class PriorityPreemptionRule : IFindingRule
{
    /// <summary>Fewer preemptions than this are incidental.</summary>
    public const long MinPreemptions = 10;

    public string Kind => "priority-preemption";

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (context.Evidence is not { } evidence) yield break;
        var threads = evidence.Threads.Values
            .Where(t => context.Reported.Contains(t.Tid) && t.HigherPriorityPreemptions > 0)
            .OrderBy(t => t.Tid).ToList();
        var preemptions = threads.Sum(t => t.HigherPriorityPreemptions);
        if (preemptions < MinPreemptions) yield break;
        var ready = threads.Sum(t => t.HigherPriorityReadyNs);
        yield return new FindingSection
        {
            Kind = Kind,
            Severity = FindingEngine.Round(context.Share(ready)),
            Title = $"Priority: {EnglishCount.Of(threads.Count, "thread")} preempted " +
                $"{EnglishCount.Times(preemptions)} " +
                "by higher-priority tasks, " +
                $"runnable {ready / 1e6:0.#} ms behind them",
            Evidence =
            [
                Figure.Of("findings.evidence.higherPriorityPreemptions", preemptions),
                Figure.Of("findings.evidence.higherPriorityReadyNs", ready),
            ],
            Threads = threads.Select(t => t.Tid).ToList(),
            Windows = FindingContext.Windows(evidence.HigherPriorityReady),
            Remedy = "Run the contending threads at normal priority, or keep higher-priority load off their CPUs: " +
                "a preempted holder keeps its lock, so the whole queue waits behind the other work (TM7).",
            Claims = ["TM7"],
        };
    }
}
