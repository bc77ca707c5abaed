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
    /// Analysis threads when the user does not say: one per CPU besides the reading thread (at most one per analyzer);
    /// none on a single CPU, where a second thread could only add hand-off cost.
    /// </summary>
    public static int DefaultThreads => Math.Clamp(Environment.ProcessorCount - 1, 0, MaxThreads);

    /// <summary>More threads than analyzers would only repeat the accounting.</summary>
    public const int MaxThreads = 6;

    /// <summary>Marks the group that also records the timeline (with the convoy and wakeup analyzers it draws from).</summary>
    public const AnalysisKind TimelineGroup = (AnalysisKind)(1 << 30);

    /// <summary>
    /// Relative per-event cost, ns/event on the `timemutex mutex` capture with lock syscalls (docs/performance.md):
    /// a balancing hint, not a measurement the results depend on.
    /// </summary>
    private static double Cost(AnalysisKind kind) => kind switch
    {
        AnalysisKind.Kernel => 14,
        AnalysisKind.Convoys => 22,
        AnalysisKind.Wakeups => 11,
        AnalysisKind.Smp => 12,
        AnalysisKind.WaitGraph => 18,
        AnalysisKind.Findings => 12,
        TimelineGroup => 10,
        _ => 0,
    };

    /// <summary>
    /// At most <paramref name="threads"/> groups of analysis kinds (never an empty one; at least one group, possibly
    /// <see cref="AnalysisKind.None"/> for the accounting alone).
    /// </summary>
    public static IReadOnlyList<AnalysisKind> Partition(AnalysisKind kinds, bool timeline, int threads)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        var items = new List<(AnalysisKind Kinds, double Cost)>();
        var bundled = AnalysisKind.None;
        if (timeline)
        {
            bundled = TimelineGroup | (kinds & (AnalysisKind.Convoys | AnalysisKind.Wakeups));
            items.Add((bundled, Cost(TimelineGroup) + Cost(bundled & AnalysisKind.Convoys) + Cost(bundled & AnalysisKind.Wakeups)));
        }

        foreach (var k in new[] { AnalysisKind.Kernel, AnalysisKind.Convoys, AnalysisKind.Wakeups, AnalysisKind.Smp, AnalysisKind.WaitGraph,
            AnalysisKind.Findings })
            if (kinds.HasFlag(k) && !bundled.HasFlag(k)) items.Add((k, Cost(k)));

        var n = Math.Clamp(items.Count, 1, threads);
        var groups = new AnalysisKind[n];
        var load = new double[n];
        foreach (var (k, c) in items.OrderByDescending(i => i.Cost))
        {
            var g = Array.IndexOf(load, load.Min());
            groups[g] |= k;
            load[g] += c;
        }

        // Selection flags that are not analyzers of their own (threads) ride with the first group.
        groups[0] |= kinds & AnalysisKind.Threads;
        return groups;
    }
}
