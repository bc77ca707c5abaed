namespace TraceLab.Analyzers.Parallel;

/// <summary>The analyses one pass runs, and whether it also records the thread timeline.</summary>
public readonly record struct PassPlan(AnalysisKind Kinds, bool Timeline);

/// <summary>
/// Shares the selected analyzers out over analysis threads so that the busiest thread has as little to do as
/// possible (longest-first onto the least-loaded thread). Each thread also repeats the scheduler accounting, so a
/// thread is only worth adding while an analyzer costs more than the accounting. Only speed depends on the plan:
/// every analyzer sees the same events in the same order on any thread.
/// </summary>
public static class AnalysisPlan
{
    /// <summary>
    /// Analysis threads when the user does not say: one per CPU besides the reading thread (at most one per analyzer);
    /// none on a single CPU, where a second thread could only add hand-off cost.
    /// </summary>
    public static int DefaultThreads => Math.Clamp(Environment.ProcessorCount - 1, 0, MaxThreads);

    /// <summary>More threads than analyzers would only repeat the accounting.</summary>
    public const int MaxThreads = 6;

    /// <summary>The timeline's cost hint (ns/event, as <see cref="AnalysisDefinition.CostHint"/>).</summary>
    private const double TimelineCost = 10;

    /// <summary>The analyses the timeline draws from: the plan keeps them in the timeline's pass.</summary>
    public static AnalysisKind TimelineSources => AnalysisKind.Convoys | AnalysisKind.Wakeups;

    /// <summary>
    /// At most <paramref name="threads"/> passes (never an empty one; at least one, possibly with
    /// <see cref="AnalysisKind.None"/> for the accounting alone).
    /// </summary>
    public static IReadOnlyList<PassPlan> Partition(AnalysisKind kinds, bool timeline, int threads)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        var items = new List<(PassPlan Plan, double Cost)>();
        var bundled = AnalysisKind.None;
        if (timeline)
        {
            bundled = kinds & TimelineSources;
            items.Add((new PassPlan(bundled, Timeline: true), TimelineCost + CostOf(bundled)));
        }

        // Analyses without an analyzer of their own (threads) cost nothing here and ride with the first pass.
        foreach (var a in Analyses.Selected(kinds))
            if (a.Create is not null && !bundled.Includes(a)) items.Add((new PassPlan(a.Kind, false), a.CostHint));

        var n = Math.Clamp(items.Count, 1, threads);
        var groups = new PassPlan[n];
        var load = new double[n];
        foreach (var (plan, cost) in items.OrderByDescending(i => i.Cost))
        {
            var g = Array.IndexOf(load, load.Min());
            groups[g] = new PassPlan(groups[g].Kinds | plan.Kinds, groups[g].Timeline || plan.Timeline);
            load[g] += cost;
        }

        var readOnly = Analyses.Selected(kinds).Where(a => a.Create is null)
            .Aggregate(AnalysisKind.None, (k, a) => k | a.Kind);
        groups[0] = groups[0] with { Kinds = groups[0].Kinds | readOnly };
        return groups;
    }

    private static double CostOf(AnalysisKind kinds) => Analyses.Selected(kinds).Sum(a => a.CostHint);
}
