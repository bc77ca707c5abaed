namespace TraceLab.Reporting.Findings;

/// <summary>
/// `oversubscription` (TH1/TH2): the reported threads spent at least as long runnable after preemptions (or from
/// their creation to their first run) as running, on average at least 1.5 of them per CPU wanted one, and the
/// CPUs were busy (idle at most <see cref="MaxIdleShare"/> of the time). Wake preemptions (by a thread the preempted
/// one had just woken: a handoff's cost) do not count. Severity: that runnable time; the evidence splits it into
/// time behind the process's own threads and behind other processes' tasks.
/// </summary>
public sealed class OversubscriptionRule : IFindingRule
{
    /// <summary>Runnable after preemption ÷ running, at least.</summary>
    public const double MinReadyToRun = 1.0;
    /// <summary>Threads wanting a CPU (running or runnable after preemption or creation), on average, per CPU, at
    /// least.</summary>
    public const double MinDemandPerCpu = 1.5;
    /// <summary>Idle CPU time ÷ CPU time in the region, at most: with idle CPUs waiting is placement, not too many
    /// threads.</summary>
    public const double MaxIdleShare = 0.1;

    public string Kind => "oversubscription";

    /// <summary>
    /// The rule's conditions on <paramref name="r"/>: as long runnable after preemptions as running; half again as many
    /// of the threads wanting a CPU, on average, as there are CPUs (more threads than CPUs, not a machine busy with
    /// other work while the process keeps one thread per CPU: that is <see cref="CpuContentionRule"/>); the CPUs busy.
    /// </summary>
    internal static bool Holds(ReadyAfterPreemptions r, int cpus) =>
        r.ReadyNs >= MinReadyToRun * r.RunNs && r.Demand >= MinDemandPerCpu * cpus && !(r.IdleShare > MaxIdleShare);

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (ReadyAfterPreemptions.Of(context) is not { } r || !Holds(r, context.Report.Capture.Cpus)) yield break;
        var (threads, ready, behindOwn, run) = (r.Threads, r.ReadyNs, r.BehindOwnNs, r.RunNs);
        yield return new FindingSection
        {
            Kind = Kind,
            Severity = FindingEngine.Round(context.Share(ready)),
            Title = $"Oversubscription: {EnglishCount.Of(threads.Count, "thread")} waited {ready / 1e6:0.#} ms " +
                "for a CPU after " +
                $"preemptions, {(run > 0 ? ready / (double)run : 0):0.0}× their {run / 1e6:0.#} ms of running, " +
                $"on {context.Report.Capture.Cpus} busy CPUs " +
                $"({(ready > 0 ? (double)behindOwn / ready : 0):P0} of it behind the process's own threads)",
            Evidence = r.Figures(context),
            Threads = threads.Select(t => t.Tid).ToList(),
            Windows = FindingContext.Windows([.. threads.Select(t => t.PreemptedReady)]),
            Remedy = "Run about as many CPU-bound threads at once as there are CPUs: gate the rest with a semaphore " +
                "of that many slots (TH1). The time lost beyond that is the preemptions themselves, the context " +
                "switches between threads that all want to run (TH2). When most of the wait is behind other " +
                "processes, the machine, not the program, has too many runnable threads.",
            Claims = ["TH1", "TH2"],
        };
    }
}
