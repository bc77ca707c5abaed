namespace TraceLab.Reporting.Findings;

/// <summary>
/// `cross-cpu-wakeups` (TM8): wakeups that ran the woken thread on another CPU than the waker's took longer than
/// same-CPU ones. Severity: Σ over threads of cross-CPU wakeups × (cross − same median latency).
/// </summary>
public sealed class CrossCpuWakeupRule : IFindingRule
{
    /// <summary>Samples each median needs per thread, at least.</summary>
    public const long MinSamples = 10;

    public string Kind => "cross-cpu-wakeups";

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (context.Report.Wakeups is not { } wakeups) yield break;
        var threads = wakeups.Threads
            .Where(t => context.Reported.Contains(t.Tid)
                && t.CrossCpuLatency.Count >= MinSamples && t.SameCpuLatency.Count >= MinSamples
                && t.CrossCpuLatency.P50Ns > t.SameCpuLatency.P50Ns)
            .ToList();
        if (threads.Count == 0) yield break;
        var extra = threads.Sum(t =>
            (double)t.CrossCpuLatency.Count * (t.CrossCpuLatency.P50Ns - t.SameCpuLatency.P50Ns));
        var cross = threads.Sum(t => t.CrossCpuLatency.Count);
        var evidenceFigures = new List<FindingFigure>
        {
            Figure.Of("wakeups.threads[].crossCpuLatency.count", cross),
            Figure.Of("wakeups.threads[].crossCpuLatency.p50Ns (max)", threads.Max(t => t.CrossCpuLatency.P50Ns)),
            Figure.Of("wakeups.threads[].sameCpuLatency.p50Ns (max)", threads.Max(t => t.SameCpuLatency.P50Ns)),
            Figure.Of("findings.evidence.crossCpuExtraNs", extra),
        };
        if (context.Report.Smp is { } smp)
            evidenceFigures.Add(Figure.Of("smp.totals.cpuChanges", smp.Totals.CpuChanges));
        yield return new FindingSection
        {
            Kind = Kind,
            Severity = FindingEngine.Round(context.Share(extra)),
            Title = $"Wakeups across CPUs: {EnglishCount.Of(cross, "wakeup")} ran the woken thread on another CPU, " +
                "about " +
                $"{extra / 1e6:0.#} ms more wakeup latency than on the waker's CPU",
            Evidence = evidenceFigures,
            Threads = threads.Select(t => t.Tid).ToList(),
            Remedy = "Keep threads that pass a lock or work to each other on the same CPU (affinity): the woken " +
                "thread then runs where the waker was, without waiting for another CPU to notice; contenders " +
                "pinned to one CPU ran faster than spread over several (TM8).",
            Claims = ["TM8"],
        };
    }
}
