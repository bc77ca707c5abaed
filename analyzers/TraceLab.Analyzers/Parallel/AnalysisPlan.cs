namespace TraceLab.Analyzers.Parallel;

/// <summary>
/// Shares the selected analyzers out over analysis threads so that the busiest thread has as little to do as
/// possible (longest-first onto the least-loaded thread). Each thread also repeats the scheduler accounting, so a
/// thread is only worth adding while an analyzer costs more than the accounting. Only speed depends on the plan:
/// every analyzer sees the same events in the same order on any thread.
/// </summary>
public static class AnalysisPlan
{
    /// <summary>
    /// Analysis threads when the user does not say: one per CPU besides the reading thread, at most
    /// <see cref="DefaultMaxThreads"/>; none on a single CPU, where a second thread could only add hand-off cost.
    /// </summary>
    public static int DefaultThreads => Math.Clamp(Environment.ProcessorCount - 1, 0, DefaultMaxThreads);

    /// <summary>
    /// Analysis threads by default on a large machine. Each thread repeats the accounting, so memory grows with
    /// threads, and beyond two the reader is the bottleneck: on 16 CPUs (docs/performance.md#analysis-threads-16-cpus),
    /// `analyze` of the busy perf.data with 2 threads took 0.67 s and 146 MiB, with 6 0.70 s and 170 MiB (the
    /// trace.dat twin 0.33 s / 124 MiB against 0.34 s / 160 MiB).
    /// </summary>
    public const int DefaultMaxThreads = 2;

    /// <summary>More threads than analyzers would only repeat the accounting.</summary>
    public const int MaxThreads = 6;

    /// <summary>
    /// At most <paramref name="threads"/> passes, each the selection of the analyses it runs (never an empty one; at
    /// least one, possibly <see cref="AnalysisSelection.None"/> for the accounting alone). An analysis runs in the
    /// pass of the analyses it observes (<see cref="AnalysisDefinition.Observes"/>); one that costs nothing (it only
    /// reads the accounting) rides with the first pass.
    /// </summary>
    public static IReadOnlyList<AnalysisSelection> Partition(AnalysisCatalog catalog, AnalysisSelection selection,
        int threads)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        var selected = catalog.Selected(selection).ToList();
        // Bundles: an observer with the selected analyses it observes, each of those in no other bundle.
        var items = new List<(AnalysisSelection Plan, double Cost)>();
        var bundled = AnalysisSelection.None;
        foreach (var observer in selected.Where(a => a.Observes.Count > 0))
        {
            var plan =
                observer.Observes.Where(selected.Contains).Aggregate(catalog.Of(observer), (s, a) => s | catalog.Of(a));
            items.Add((plan, catalog.Selected(plan).Sum(a => a.CostHint)));
            bundled |= plan;
        }
        foreach (var a in selected)
            if (a.CostHint > 0 && !bundled.Includes(catalog.Of(a))) items.Add((catalog.Of(a), a.CostHint));

        var n = Math.Clamp(items.Count, 1, threads);
        var groups = new AnalysisSelection[n];
        var load = new double[n];
        foreach (var (plan, cost) in items.OrderByDescending(i => i.Cost))
        {
            var g = Array.IndexOf(load, load.Min());
            groups[g] |= plan;
            load[g] += cost;
        }

        foreach (var a in selected)
            if (a.CostHint == 0 && !bundled.Includes(catalog.Of(a))) groups[0] |= catalog.Of(a);
        return groups;
    }
}
