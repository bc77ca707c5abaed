using TraceLab.Reporting;

namespace TraceLab.Sweeps;

/// <summary>
/// Per-run numbers taken from a traced run's report (docs/sweeps.md): per-thread
/// means over the workload's worker threads, and process-wide sums of the analyses' counts.
/// </summary>
public static class TracedMetrics
{
    private static readonly Dictionary<string, string> Labels = new()
    {
        ["involPerThread"] = "involuntary switches per worker thread",
        ["volPerThread"] = "voluntary switches per worker thread",
        ["readyMsPerThread"] = "ready (runnable, not running) ms per worker thread",
        ["runMsPerThread"] = "run ms per worker thread",
        ["migrations"] = "migrations, all worker threads",
        ["syscallsPerIteration"] = "syscalls per worker iteration",
        ["handoffs"] = "lock handoffs",
        ["futileWakeups"] = "futile wakeups, all threads",
        ["futileShare"] = "futile share of wakeups",
        ["crossCpuWakeups"] = "cross-CPU wakeups received",
        ["idleCpuMs"] = "idle CPU ms, all CPUs",
        ["runnableWhileIdleMs"] = "ms runnable while a CPU was idle, all threads",
    };

    public static IReadOnlyCollection<string> Names => Labels.Keys;

    public static string Label(string name) => Labels.TryGetValue(name, out var l) ? l : name + "";

    public static Dictionary<string, double> From(RunReport report)
    {
        var m = new Dictionary<string, double>();
        var workers =
            report.Threads.Where(t => t.Role?.StartsWith("worker", StringComparison.Ordinal) == true).ToList();
        if (workers.Count == 0) workers = report.Threads;
        if (workers.Count > 0)
        {
            m["involPerThread"] = workers.Average(t => (double)t.InvoluntarySwitches);
            m["volPerThread"] = workers.Average(t => (double)t.VoluntarySwitches);
            m["readyMsPerThread"] = workers.Average(t => t.ReadyNs / 1e6);
            m["runMsPerThread"] = workers.Average(t => t.RunNs / 1e6);
            m["migrations"] = workers.Sum(t => t.Migrations);
        }
        var tids = workers.Select(t => t.Tid).ToHashSet();
        var iterations = workers.Sum(t => t.Workload?.Iterations ?? 0);
        if (report.Kernel is { Captured: true } k && iterations > 0)
            m["syscallsPerIteration"] =
                k.Threads.Where(t => tids.Contains(t.Tid)).Sum(t => (double)t.SyscallCalls) / iterations;
        if (report.Convoys is { } c) m["handoffs"] = c.Objects.Sum(o => o.Handoffs);
        if (report.Wakeups is { } w)
        {
            var futile = w.Threads.Sum(t => t.Futile);
            var wakeups = w.Threads.Sum(t => t.Wakeups);
            m["futileWakeups"] = futile;
            m["futileShare"] = wakeups == 0 ? 0 : (double)futile / wakeups;
        }
        if (report.Smp is { } s)
        {
            m["crossCpuWakeups"] = s.Totals.WakeupsReceivedCrossCpu;
            m["idleCpuMs"] = s.Cpus.Sum(x => x.IdleNs) / 1e6;
            m["runnableWhileIdleMs"] = s.Threads.Sum(x => x.RunnableWhileIdleNs) / 1e6;
        }
        return m;
    }
}
