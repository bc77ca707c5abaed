using System.Globalization;

namespace TraceLab.Reporting.Findings;

/// <summary>
/// `cpu-contention`: the threads of the process a report is about waited for a CPU at least as long as they ran,
/// on CPUs that were busy, most of whose time ran other processes, and the process itself did not want more CPUs
/// than the machine has (that is <see cref="OversubscriptionRule"/>). The machine is short of CPUs, not the program:
/// a server traced beside its load generator, a build, another service, or the capture itself. All runnable time
/// counts (after wakeups as after preemptions: a woken thread waits for a CPU the same way); it is charged to the
/// other processes in proportion to their share of the busy CPU time, and the title names the processes that used
/// the CPUs most.
/// </summary>
public sealed class CpuContentionRule : IFindingRule
{
    /// <summary>Of the CPUs' busy time in the region, other processes' running, at least.</summary>
    public const double MinOthersShare = 0.5;

    /// <summary>The processes the title names, at most.</summary>
    public const int NamedProcesses = 3;

    public string Kind => "cpu-contention";

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        var report = context.Report;
        // Needs a process the report is about: in a whole-system report every process is "the process".
        if (report.Process is not { } process || ReadyAfterPreemptions.IdleShareOf(report) is not { } idleShare
            || idleShare > OversubscriptionRule.MaxIdleShare)
            yield break;
        var busy = report.Smp!.Cpus.Sum(c => c.BusyNs);
        if (busy <= 0) yield break;
        var threads = report.Threads.Where(t => t.ReadyNs > 0).OrderBy(t => t.Tid).ToList();
        var ready = threads.Sum(t => t.ReadyNs);
        var run = threads.Sum(t => t.RunNs);
        if (threads.Count == 0 || ready < OversubscriptionRule.MinReadyToRun * run) yield break;
        // Too many threads of its own is oversubscription, whoever else ran.
        if (ReadyAfterPreemptions.Of(context) is { } preempted
            && OversubscriptionRule.Holds(preempted, report.Capture.Cpus))
            yield break;

        var others = report.Processes.Where(p => p.Pid != process.Pid)
            .Select(p => (Name: $"{p.Name} (pid {p.Pid})", p.RunNs))
            .Concat(Left("tracelab (this capture", report.Self))
            .Concat(Left("excluded (--exclude-pid", report.Excluded))
            .Where(p => p.RunNs > 0).OrderByDescending(p => p.RunNs).ThenBy(p => p.Name, StringComparer.Ordinal)
            .ToList();
        var othersNs = others.Sum(p => p.RunNs);
        var othersShare = Math.Min(1, (double)othersNs / busy);
        if (othersShare < MinOthersShare) yield break;

        var behindOthers = (long)(ready * othersShare);
        var named = string.Join(", ", others.Take(NamedProcesses).Select(p => $"{p.Name} {p.RunNs / 1e6:0.#} ms"));
        var more = others.Count > NamedProcesses ? $", {others.Count - NamedProcesses} more" : "";
        var figures = new List<FindingFigure>
        {
            Figure.Of("threads[].readyNs", ready),
            Figure.Of("threads[].runNs", run),
            Figure.Of("smp.cpus[].busyNs", busy),
            Figure.Of("smp.cpus[].idleNs (share)", idleShare),
            Figure.Of("processes[].runNs (other processes, self and excluded)", othersNs),
            Figure.Of("findings.evidence.othersShareOfBusy", othersShare),
            Figure.Of("findings.evidence.readyBehindOthersNs", behindOthers),
        };
        yield return new FindingSection
        {
            Kind = Kind,
            Severity = FindingEngine.Round(context.Share(behindOthers)),
            Title = $"CPU contention: {EnglishCount.Of(threads.Count, "thread")} of {process.Name ?? "the process"} " +
                $"waited {ready / 1e6:0.#} ms for a CPU, {(run > 0 ? ready / (double)run : 0):0.0}× their " +
                $"{run / 1e6:0.#} ms of running, on {report.Capture.Cpus} CPUs busy " +
                $"{1 - idleShare:P0} of the time, {othersShare:P0} of it running other processes: " +
                $"{named}{more}",
            Evidence = figures,
            Threads = threads.Select(t => t.Tid).ToList(),
            Remedy = "The machine, not the program, is short of CPUs: other work ran while these threads were ready " +
                "to run. Give the process CPUs of its own (cpusets, taskset) or a larger share (cgroup cpu.weight, " +
                "nice), or move the other work (a load generator, a build) elsewhere; measure it alone before tuning " +
                "its locks, whose waits this lengthens.",
            Claims = [],
        };
    }

    /// <summary>The processes a report leaves out (TraceLab's own, --exclude-pid) as one entry.</summary>
    private static IEnumerable<(string Name, long RunNs)> Left(string what, SelfCostSection? left) =>
        left is { Pids.Count: > 0 }
            ? [(string.Create(CultureInfo.InvariantCulture, $"{what}, pid {string.Join(", ", left.Pids)})"),
                left.RunNs)]
            : [];
}
