namespace TraceLab.Reporting.Findings;

/// <summary>
/// `kernel-lock`: a lock whose every acquisition is a system call (System V semaphores: the trace shows each one),
/// uncontended ones included. Severity: the reported threads' time on CPU or runnable inside those calls, shared
/// between such objects by their acquisitions.
/// </summary>
public sealed class KernelLockRule : IFindingRule
{
    /// <summary>Fewer acquisitions than this say nothing about a habit.</summary>
    public const long MinAcquisitions = 100;

    private static readonly HashSet<string> SemaphoreCalls = ["semop", "semtimedop"];

    public string Kind => "kernel-lock";

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (context.Report.Convoys is not { } convoys || context.Report.Kernel is not { Captured: true } kernel)
            yield break;
        var objects = convoys.Objects
            .Where(o => o.Kind == "SysVSemaphore" && o.Acquisitions >= MinAcquisitions).ToList();
        var totalAcquisitions = objects.Sum(o => o.Acquisitions!.Value);
        var calls = kernel.Threads.Where(t => context.Reported.Contains(t.Tid))
            .SelectMany(t => t.Syscalls.Where(s => SemaphoreCalls.Contains(s.Name)).Select(s => (t.Tid, Call: s)))
            .ToList();
        var cpuNs = calls.Sum(x => x.Call.CpuNs);
        var readyNs = calls.Sum(x => x.Call.ReadyNs);
        foreach (var o in objects)
        {
            var share = (double)o.Acquisitions!.Value / totalAcquisitions;
            yield return new FindingSection
            {
                Kind = Kind,
                Severity = FindingEngine.Round(context.Share((cpuNs + readyNs) * share)),
                Title = $"Kernel lock where a user-space fast path would do: all {o.Acquisitions:N0} acquisitions of " +
                    $"{o.Object} were system calls, {o.FastAcquisitions:N0} of them uncontended",
                Evidence =
                [
                    Figure.Of("convoys.objects[].acquisitions", o.Acquisitions.Value),
                    Figure.Of("convoys.objects[].fastAcquisitions", o.FastAcquisitions),
                    Figure.Of("convoys.objects[].handoffShare", o.HandoffShare ?? 0),
                    Figure.Of("kernel.threads[].syscalls[].calls", calls.Sum(x => x.Call.Calls)),
                    Figure.Of("kernel.threads[].syscalls[].cpuNs", cpuNs),
                    Figure.Of("kernel.threads[].syscalls[].readyNs", readyNs),
                ],
                Threads = calls.Select(x => x.Tid).Distinct().Order().ToList(),
                Objects = [o.Object],
                Windows = context.Evidence is null
                    ? []
                    : FindingContext.Windows(ObjectWindows.Blocked(context.Evidence, o.Object)),
                Remedy = "Use a lock that takes the free case in user space (a futex-based mutex or critical " +
                    "section): an uncontended acquisition then costs no system call and contended ones still sleep " +
                    "(TM1). An " +
                    "event or binary semaphore instead of the mutex saves little, it is still a kernel object (TM10).",
                Claims = ["TM1", "TM10"],
            };
        }
    }
}
