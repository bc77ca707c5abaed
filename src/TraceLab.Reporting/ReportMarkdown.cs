using System.Text;

namespace TraceLab.Reporting;

/// <summary>report.md: the same figures as report.json, for people.</summary>
public static class ReportMarkdown
{
    public static string Render(RunReport r)
    {
        var sb = new StringBuilder();
        var title = r.Run is null ? "TraceLab analysis" : $"TraceLab: {r.Run.Workload} {r.Run.Scenario}".TrimEnd();
        sb.AppendLine($"# {title}").AppendLine();
        if (r.Run is not null)
        {
            sb.AppendLine($"- Parameters: {string.Join(", ", r.Run.Parameters.Select(kv => $"{kv.Key}={kv.Value}"))}");
            if (r.Run.Claims.Count > 0) sb.AppendLine($"- Seed claims tested: {string.Join(", ", r.Run.Claims)} (docs/claims.md)");
            if (r.Run.Command is not null) sb.AppendLine($"- Workload command: `{r.Run.Command}`");
        }
        var c = r.Capture;
        sb.AppendLine($"- Trace: `{c.TraceFile}` ({c.Backend}, {c.Cpus} CPUs, clock {c.Clock ?? "?"}, kernel {c.Kernel ?? "?"}){(c.Partial ? " — PARTIAL (run interrupted)" : "")}");
        sb.AppendLine($"- Events: {Units.N(c.Events)} ({Units.N(c.SwitchEvents)} context switches), lost: {Units.N(c.LostEvents)}, broken switch chains repaired: {Units.N(c.ChainBreaks)} ({Units.N(c.ChainBreaksInRegion)} in region)");
        if (c.LossScope is not null)
        {
            var where = c.LossCpus is { } cpus ? $"threads that ran on CPU {string.Join(", ", cpus)}" : "every thread (the loss cannot be placed on CPUs)";
            sb.AppendLine($"- Lost events may affect the figures of {where}: marked ⚠ below (docs/metrics.md, lost events)");
        }
        sb.AppendLine($"- Region: {r.Region.Source}, {Units.S(r.Region.DurationNs)} s").AppendLine();

        if (r.Process is { } p)
        {
            sb.AppendLine("## Process (timep)").AppendLine();
            sb.AppendLine("| pid | name | real s | user s | system s | traced run s | traced ready s | traced wait s | voluntary | involuntary |");
            sb.AppendLine("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
            sb.AppendLine($"| {p.Pid} | {p.Name} | {Opt(p.RealNs)} | {Opt(p.UserNs)} | {Opt(p.SystemNs)} | {Units.S(p.TracedRunNs)} | {Units.S(p.TracedReadyNs)} | {Units.S(p.TracedWaitNs)} | {Units.N(p.VoluntarySwitches)} | {Units.N(p.InvoluntarySwitches)} |");
            sb.AppendLine();
            if (p.WorkloadMetrics is { } m) sb.AppendLine($"Workload's own figures: {WorkloadMetricsText.Format(m)}").AppendLine();
        }

        if (r.Analyses.Count == 0 || r.Analyses.Contains("threads")) Threads(sb, r);
        if (r.Kernel is { } k) MarkdownSections.Kernel(sb, k);
        if (r.Convoys is { } cv) MarkdownSections.Convoys(sb, cv);
        if (r.Wakeups is { } w) MarkdownSections.Wakeups(sb, w);
        if (r.Smp is { } smp) MarkdownSections.Smp(sb, smp);
        if (r.WaitGraph is { } g) MarkdownSections.WaitGraph(sb, g);
        if (r.Warnings.Count > 0)
        {
            sb.AppendLine("## Warnings").AppendLine();
            foreach (var warning in r.Warnings) sb.AppendLine($"- {warning}");
            sb.AppendLine();
        }
        sb.AppendLine("Definitions of every column: docs/metrics.md. Field reference: docs/report-schema.md.");
        return sb.ToString();
    }

    private static void Threads(StringBuilder sb, RunReport r)
    {
        sb.AppendLine("## Threads").AppendLine();
        sb.AppendLine("| tid | name | role | run ms | ready ms | wait ms | vol | invol | migr | wakeups recv | wakeups given | ready p50 µs | p99 µs | max µs | top wakers | user ms (rusage) | sys ms (rusage) | iterations |");
        sb.AppendLine("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|");
        foreach (var t in r.Threads)
        {
            var wakers = string.Join("; ", t.TopWakers.Select(w => $"{w.Name}({w.Tid}) ×{Units.N(w.Count)}"));
            sb.AppendLine($"| {t.Tid}{(t.MayBeAffectedByLoss == true ? " ⚠" : "")} | {t.Name} | {t.Role} | {Units.Ms(t.RunNs)} | {Units.Ms(t.ReadyNs)} | {Units.Ms(t.WaitNs)} | {Units.N(t.VoluntarySwitches)} | {Units.N(t.InvoluntarySwitches)} | {Units.N(t.Migrations)} | {Units.N(t.WakeupsReceived)} | {Units.N(t.WakeupsGiven)} | {Units.Us(t.ReadyLatency.P50Ns)} | {Units.Us(t.ReadyLatency.P99Ns)} | {Units.Us(t.ReadyLatency.MaxNs)} | {wakers} | {(t.Workload is null ? "" : Units.Ms(t.Workload.UserNs))} | {(t.Workload is null ? "" : Units.Ms(t.Workload.SystemNs))} | {(t.Workload is null ? "" : Units.N(t.Workload.Iterations))} |");
        }
        sb.AppendLine();
    }

    private static string Opt(long? ns) => ns is null ? "—" : Units.S(ns.Value);
}
