using TraceLab.Reporting.Sections;

namespace TraceLab.Reporting;

/// <summary>
/// Which reported figures lost events may have changed (docs/metrics.md#loss-flags). Loss counters say how
/// many events a CPU lost, not when, so the unit is a CPU over the whole trace:
/// a thread is flagged when it ran on a CPU that lost events. When the loss cannot be placed on CPUs (ETW reports
/// one total) or the run time per CPU is unknown (`smp` not selected), every reported thread is flagged.
/// </summary>
public static class LossFlags
{
    public const string ScopePerCpu = "per-cpu";
    public const string ScopeTrace = "trace";

    /// <summary>
    /// The report fields computed from the event stream: a lost switch or wakeup can change any of them.
    /// </summary>
    public static readonly IReadOnlyList<string> AffectedMetrics =
    [
        "process.traced*", "process.voluntarySwitches", "process.involuntarySwitches",
        "threads[].runNs", "threads[].readyNs", "threads[].waitNs", "threads[].voluntarySwitches",
        "threads[].involuntarySwitches", "threads[].migrations", "threads[].wakeupsReceived", "threads[].wakeupsGiven",
        "threads[].readyLatency", "threads[].topWakers", "kernel", "convoys", "wakeups", "smp", "waitGraph",
    ];

    /// <summary>
    /// One line naming the flagged threads (terminal, report.md and report.json warnings); null without loss.
    /// </summary>
    public static string? Warning(CaptureSection capture, IReadOnlyList<ThreadSection> threads)
    {
        if (capture.LossScope is null) return null;
        if (capture.LossCpus is not { } cpus)
            return "lost events could not be placed on CPUs: every thread's figures may be affected "
                + "(threads[].mayBeAffectedByLoss)";
        var flagged = threads.Where(t => t.MayBeAffectedByLoss == true)
            .Select(t => t.Tid.ToString(System.Globalization.CultureInfo.InvariantCulture)).ToList();
        return flagged.Count == 0
            ? $"events were lost on CPU {string.Join(", ", cpus)}, where no reported thread ran"
            : $"events were lost on CPU {string.Join(", ", cpus)}: the figures of threads "
                + $"{string.Join(", ", flagged)}, which ran there, may be affected (marked ⚠ in report.md)";
    }

    /// <summary>CPUs whose loss counter or missed-events page count is above zero.</summary>
    public static int[] LossyCpus(long[]? lostPerCpu, long[]? pagesWithMissedEvents)
    {
        var n = Math.Max(lostPerCpu?.Length ?? 0, pagesWithMissedEvents?.Length ?? 0);
        return Enumerable.Range(0, n)
            .Where(cpu => (lostPerCpu is not null && cpu < lostPerCpu.Length && lostPerCpu[cpu] > 0)
                          || (pagesWithMissedEvents is not null && cpu < pagesWithMissedEvents.Length
                              && pagesWithMissedEvents[cpu] > 0))
            .ToArray();
    }

    /// <summary>Sets the capture's loss fields and flags the thread rows; does nothing when nothing was lost.</summary>
    public static void Apply(CaptureSection capture, List<ThreadSection> threads, SmpSection? smp)
    {
        var lossy = LossyCpus(capture.LostEventsPerCpu, capture.PagesWithMissedEvents);
        if (lossy.Length == 0 && capture.LostEvents == 0) return;

        capture.LossAffectedMetrics = AffectedMetrics;
        // A per-CPU counter array as long as the CPU list places the loss; ETW's single total does not.
        var perCpu = lossy.Length > 0 && capture.LostEventsPerCpu?.Length == capture.Cpus && smp is not null;
        capture.LossScope = perCpu ? ScopePerCpu : ScopeTrace;
        if (!perCpu)
        {
            foreach (var t in threads) t.MayBeAffectedByLoss = true;
            return;
        }

        capture.LossCpus = lossy;
        var residency = smp!.Threads.ToDictionary(t => t.Tid, t => t.ResidencyNs);
        foreach (var t in threads)
        {
            if (!residency.TryGetValue(t.Tid, out var ns)) continue;
            var cpus = lossy.Where(cpu => cpu < ns.Count && ns[cpu] > 0).ToArray();
            if (cpus.Length == 0) continue;
            t.MayBeAffectedByLoss = true;
            t.LossCpus = cpus;
        }
    }
}
