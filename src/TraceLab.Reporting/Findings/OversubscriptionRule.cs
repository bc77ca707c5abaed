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

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (context.Evidence is not { } evidence) yield break;
        var own = evidence.Threads.Values.Where(t => context.Reported.Contains(t.Tid))
            .Select(t => (Thread: t, Ns: t.StartReadyNs + t.ReadyByPreemptor.Values.Sum()))
            .Where(x => x.Ns > 0).OrderBy(x => x.Thread.Tid).ToList();
        var threads = own.Select(x => x.Thread).ToList();
        var ready = own.Sum(x => x.Ns);
        var behindOwn = threads.Sum(t =>
            t.ReadyByPreemptor.Where(kv => context.Reported.Contains(kv.Key)).Sum(kv => kv.Value));
        // A set, not threads.Any per reported thread: a whole-system trace reports 100,000 threads.
        var tids = threads.Select(t => t.Tid).ToHashSet();
        var run = context.Report.Threads.Where(t => tids.Contains(t.Tid)).Sum(t => t.RunNs);
        if (threads.Count == 0 || ready < MinReadyToRun * run) yield break;
        // Half again as many of them wanted a CPU, on average, as there are CPUs: more threads than CPUs, not a
        // machine that is busy with other work while the process keeps one thread per CPU.
        var region = context.Report.Region.DurationNs;
        var demand = region > 0 ? (double)(run + ready) / region : 0;
        if (demand < MinDemandPerCpu * context.Report.Capture.Cpus) yield break;
        double? idleShare = null;
        if (context.Report.Smp is { Cpus.Count: > 0 } smp)
        {
            var total = smp.Cpus.Sum(x => x.BusyNs + x.IdleNs);
            idleShare = total > 0 ? (double)smp.Cpus.Sum(x => x.IdleNs) / total : null;
            if (idleShare > MaxIdleShare) yield break;
        }
        var evidenceFigures = new List<FindingFigure>
        {
            Figure.Of("findings.evidence.readyByPreemptor + startReadyNs", ready),
            Figure.Of("findings.evidence.readyByPreemptor (reported preemptors)", behindOwn),
            Figure.Of("findings.evidence.startReadyNs", threads.Sum(t => t.StartReadyNs)),
            Figure.Of("findings.evidence.preemptedReadyNs", threads.Sum(t => t.PreemptedReadyNs)),
            Figure.Of("threads[].runNs", run),
            Figure.Of("findings.evidence.cpuDemand", demand),
            Figure.Of("findings.evidence.preemptions", threads.Sum(t => t.Preemptions)),
            Figure.Of("findings.evidence.wakePreemptions", threads.Sum(t => t.WakePreemptions)),
            Figure.Of("threads[].involuntarySwitches",
                context.Report.Threads.Where(t => tids.Contains(t.Tid)).Sum(t => t.InvoluntarySwitches)),
        };
        if (idleShare is { } idle) evidenceFigures.Add(Figure.Of("smp.cpus[].idleNs (share)", idle));
        yield return new FindingSection
        {
            Kind = Kind,
            Severity = FindingEngine.Round(context.Share(ready)),
            Title = $"Oversubscription: {EnglishCount.Of(threads.Count, "thread")} waited {ready / 1e6:0.#} ms " +
                "for a CPU after " +
                $"preemptions, {(run > 0 ? ready / (double)run : 0):0.0}× their {run / 1e6:0.#} ms of running, " +
                $"on {context.Report.Capture.Cpus} busy CPUs " +
                $"({(ready > 0 ? (double)behindOwn / ready : 0):P0} of it behind the process's own threads)",
            Evidence = evidenceFigures,
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
