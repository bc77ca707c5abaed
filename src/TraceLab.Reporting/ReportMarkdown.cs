using System.Text;
using TraceLab.Reporting.Tables;

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
            if (r.Run.Claims.Count > 0)
                sb.AppendLine($"- Seed claims tested: {string.Join(", ", r.Run.Claims)} (docs/claims.md)");
            if (r.Run.Command is not null) sb.AppendLine($"- Workload command: `{r.Run.Command}`");
            if (ProgramExit.Describe(r) is { } exit) sb.AppendLine($"- **Failed:** {exit}");
        }
        var c = r.Capture;
        sb.Append($"- Trace: `{c.TraceFile}` ({c.Backend}, {c.Cpus} CPUs, clock {c.Clock ?? "?"}, kernel ");
        sb.AppendLine($"{c.Kernel ?? "?"}){(c.Partial ? " — PARTIAL (run interrupted)" : "")}");
        sb.Append($"- Events: {Units.N(c.Events)} ({Units.N(c.SwitchEvents)} context switches), lost: ");
        sb.Append($"{Units.N(c.LostEvents)}, broken switch chains repaired: {Units.N(c.ChainBreaks)} ");
        sb.AppendLine($"({Units.N(c.ChainBreaksInRegion)} in region)");
        if (c.LossScope is not null)
        {
            var where = c.LossCpus is { } cpus ? $"threads that ran on CPU {string.Join(", ", cpus)}"
                : "every thread (the loss cannot be placed on CPUs)";
            sb.AppendLine(
                $"- Lost events may affect the figures of {where}: marked ⚠ below (docs/metrics.md, lost events)");
        }
        sb.AppendLine($"- Region: {r.Region.Source}, {Units.S(r.Region.DurationNs)} s");
        // A report with a target says TraceLab's cost here; one without says it in the system overview.
        if (r.System is null)
            foreach (var left in SelfExclusion.Lines(r)) sb.AppendLine($"- {left} (docs/metrics.md#self-exclusion)");
        sb.AppendLine();
        foreach (var analysis in AnalysisReports.All.Where(a => a.OpensReport))
            if (analysis.View(r) is { } blocks) MarkdownRenderer.Write(sb, blocks);
        // Without a target: the system overview and the top processes, then the sections on their threads only.
        var sections = RowLimit.None;
        if (r.System is not null)
        {
            var ranking = ThreadRanking.Of(r);
            if (SystemOverview.View(r, ranking) is { } overview) MarkdownRenderer.Write(sb, overview);
            var detailed = SystemOverview.DetailedTids(r);
            sections = new RowLimit(ThreadRank: ranking, ThreadFilter: detailed.Contains,
                MoreNote: (left, table) =>
                    $"… {left:N0} more {table.RowNoun} of other processes: report.json has every thread.");
        }

        if (r.Process is { } p)
        {
            sb.AppendLine("## Process (timep)").AppendLine();
            sb.AppendLine("| pid | name | real s | user s | system s | traced run s | traced ready s | traced wait s | "
                + "voluntary | involuntary |");
            sb.AppendLine("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
            sb.Append($"| {p.Pid} | {p.Name} | {Opt(p.RealNs)} | {Opt(p.UserNs)} | {Opt(p.SystemNs)} | ");
            sb.Append($"{Units.S(p.TracedRunNs)} | {Units.S(p.TracedReadyNs)} | {Units.S(p.TracedWaitNs)} | ");
            sb.AppendLine($"{Units.N(p.VoluntarySwitches)} | {Units.N(p.InvoluntarySwitches)} |");
            sb.AppendLine();
            if (p.WorkloadMetrics is { } m)
                sb.AppendLine($"Workload's own figures: {WorkloadMetricsText.Format(m)}").AppendLine();
        }

        foreach (var analysis in AnalysisReports.All.Where(a => !a.OpensReport))
            if (analysis.View(r) is { } blocks) MarkdownRenderer.Write(sb, blocks, sections);
        if (Stacks.StacksView.View(r.Stacks) is { } stacks) MarkdownRenderer.Write(sb, stacks);
        if (r.Warnings.Count > 0)
        {
            sb.AppendLine("## Warnings").AppendLine();
            foreach (var warning in r.Warnings) sb.AppendLine($"- {warning}");
            sb.AppendLine();
        }
        sb.AppendLine("Definitions of every column: docs/metrics.md. Field reference: docs/report-schema.md.");
        return sb.ToString();
    }

    private static string Opt(long? ns) => ns is null ? "—" : Units.S(ns.Value);
}
