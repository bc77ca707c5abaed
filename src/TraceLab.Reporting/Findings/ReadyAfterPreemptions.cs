using TraceLab.Analyzers.Findings;

namespace TraceLab.Reporting.Findings;

/// <summary>
/// What <see cref="OversubscriptionRule"/> measures (<see cref="CpuContentionRule"/> asks it too, and leaves a process
/// oversubscribed by itself to it): the reported threads' runnable time after preemptions (wake preemptions left out:
/// a handoff's cost) and from their creation to their first run, whom it was spent behind, their running time, how
/// many of them wanted a CPU on average, and how idle the CPUs were.
/// </summary>
/// <param name="Threads">The reported threads with any such runnable time, by tid.</param>
/// <param name="ReadyNs"><c>startReadyNs</c> + Σ <c>readyByPreemptor</c>.</param>
/// <param name="BehindOwnNs">Of it, behind reported threads (the process's own).</param>
/// <param name="RunNs">The threads' running time.</param>
/// <param name="Demand">(running + <see cref="ReadyNs"/>) ÷ the region: threads wanting a CPU, on average.</param>
/// <param name="IdleShare">Idle ÷ (busy + idle) CPU time; null without the SMP section.</param>
internal sealed record ReadyAfterPreemptions(List<ThreadEvidence> Threads, long ReadyNs, long BehindOwnNs,
    long RunNs, double Demand, double? IdleShare)
{
    /// <summary>Of <see cref="ReadyNs"/>, runnable from creation to the first run.</summary>
    public long StartReadyNs => Threads.Sum(t => t.StartReadyNs);

    /// <summary>The figures; null without the findings evidence or any such runnable time.</summary>
    public static ReadyAfterPreemptions? Of(FindingContext context)
    {
        if (context.Evidence is not { } evidence) return null;
        var own = evidence.Threads.Values.Where(t => context.Reported.Contains(t.Tid))
            .Select(t => (Thread: t, Ns: t.StartReadyNs + t.ReadyByPreemptor.Values.Sum()))
            .Where(x => x.Ns > 0).OrderBy(x => x.Thread.Tid).ToList();
        if (own.Count == 0) return null;
        var threads = own.Select(x => x.Thread).ToList();
        var ready = own.Sum(x => x.Ns);
        var behindOwn = threads.Sum(t =>
            t.ReadyByPreemptor.Where(kv => context.Reported.Contains(kv.Key)).Sum(kv => kv.Value));
        // A set, not threads.Any per reported thread: a whole-system trace reports 100,000 threads.
        var tids = threads.Select(t => t.Tid).ToHashSet();
        var run = context.Report.Threads.Where(t => tids.Contains(t.Tid)).Sum(t => t.RunNs);
        var region = context.Report.Region.DurationNs;
        var demand = region > 0 ? (double)(run + ready) / region : 0;
        return new ReadyAfterPreemptions(threads, ready, behindOwn, run, demand, IdleShareOf(context.Report));
    }

    /// <summary>Idle ÷ (busy + idle) CPU time in the region; null without the SMP section or CPU time.</summary>
    public static double? IdleShareOf(RunReport report)
    {
        if (report.Smp is not { Cpus.Count: > 0 } smp) return null;
        var total = smp.Cpus.Sum(x => x.BusyNs + x.IdleNs);
        return total > 0 ? (double)smp.Cpus.Sum(x => x.IdleNs) / total : null;
    }

    /// <summary>The oversubscription finding's evidence.</summary>
    public List<FindingFigure> Figures(FindingContext context)
    {
        var tids = Threads.Select(t => t.Tid).ToHashSet();
        var figures = new List<FindingFigure>
        {
            Figure.Of("findings.evidence.readyByPreemptor + startReadyNs", ReadyNs),
            Figure.Of("findings.evidence.readyByPreemptor (reported preemptors)", BehindOwnNs),
            Figure.Of("findings.evidence.startReadyNs", StartReadyNs),
            Figure.Of("findings.evidence.preemptedReadyNs", Threads.Sum(t => t.PreemptedReadyNs)),
            Figure.Of("threads[].runNs", RunNs),
            Figure.Of("findings.evidence.cpuDemand", Demand),
            Figure.Of("findings.evidence.preemptions", Threads.Sum(t => t.Preemptions)),
            Figure.Of("findings.evidence.wakePreemptions", Threads.Sum(t => t.WakePreemptions)),
            Figure.Of("threads[].involuntarySwitches",
                context.Report.Threads.Where(t => tids.Contains(t.Tid)).Sum(t => t.InvoluntarySwitches)),
        };
        if (IdleShare is { } idle) figures.Add(Figure.Of("smp.cpus[].idleNs (share)", idle));
        return figures;
    }
}
