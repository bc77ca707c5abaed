using System.Globalization;
using System.Text;

namespace TraceLab.Sweeps.Output;

/// <summary>
/// report.md of a sweep: verdicts first (what a reader came for), then plots, then the per-point tables.
/// </summary>
public static class SweepReportMarkdown
{
    public static string Write(SweepSummary s, IReadOnlyList<string> tableMetrics)
    {
        var sb = new StringBuilder();
        var claims = s.Claims.Count > 0 ? $" ({string.Join(", ", s.Claims)})" : "";
        sb.AppendLine($"# Sweep {s.Sweep}{claims}: {s.Workload} — {s.Title}").AppendLine();
        sb.Append($"- swept: `{s.Definition.XParameter}` = {string.Join(", ", s.Definition.XValues)}; series: ");
        sb.AppendLine($"{string.Join("; ", s.Definition.Series.Select(x => x.Label))}");
        if (s.Definition.Base.Count > 0) sb.AppendLine(
            $"- fixed by the sweep: {string.Join(", ", s.Definition.Base.Select(kv => $"{kv.Key}={kv.Value}"))}");
        if (s.Settings.Overrides.Count > 0)
        {
            var overrides = s.Settings.Overrides.Select(kv => $"{kv.Key}={kv.Value}");
            sb.AppendLine($"- overrides (command line): {string.Join(", ", overrides)}");
        }
        sb.Append($"- {s.Settings.Repeats} repeats per point, interleaved (order seed ");
        sb.AppendLine(
            $"{s.Settings.OrderSeed}){(s.Settings.Traced ? ", every run traced (runs/*/report.json)" : ", untraced")}");
        sb.Append($"- runs: {s.RunsOk} ok, {s.RunsFailed} failed, {s.RunsPlanned} ");
        sb.AppendLine($"planned{(s.Complete ? "" : " — **incomplete** (resume with `tracelab sweep --resume DIR`)")}");
        foreach (var w in s.Warnings) sb.AppendLine($"- **{w}**");
        sb.Append($"- machine: {s.Machine.Cpus} CPUs{(s.Machine.CpuModel is { } m ? $" ({m})" : "")}, ");
        sb.AppendLine($"{s.Machine.Os}{(s.Machine.Kernel is { } k ? $", kernel {k}" : "")}, {s.Machine.Runtime}");
        sb.AppendLine();

        if (s.Verdicts.Count > 0)
        {
            sb.AppendLine("## Claim verdicts").AppendLine();
            sb.AppendLine("Criteria and metrics: docs/sweeps.md. A verdict needs ≥ 3 successful repeats at every point "
                + "it compares.").AppendLine();
            sb.AppendLine("| claim | overall | aspect | outcome |").AppendLine("| --- | --- | --- | --- |");
            foreach (var v in s.Verdicts)
                sb.AppendLine($"| {v.Claim} | {s.ClaimOutcomes[v.Claim]} | {Cell(v.Aspect)} | **{v.Outcome}** |");
            sb.AppendLine();
            foreach (var v in s.Verdicts)
            {
                sb.AppendLine($"### {v.Claim} — {v.Aspect}: {v.Outcome}").AppendLine();
                sb.AppendLine($"Criterion: {v.Criterion}").AppendLine();
                foreach (var e in v.Evidence) sb.AppendLine($"- {e}");
                sb.AppendLine();
            }
        }

        if (s.Plots.Count > 0)
        {
            sb.AppendLine("## Plots").AppendLine();
            foreach (var p in s.Plots) sb.AppendLine($"![{p}]({p})").AppendLine();
        }

        sb.AppendLine("## Per point: median [min – max] over the successful repeats").AppendLine();
        var metrics = tableMetrics.Where(m => s.Points.Any(p => p.Stats.ContainsKey(m))).ToList();
        sb.Append($"| point | series | {s.Definition.XParameter} | ok/failed | ");
        sb.AppendLine($"{string.Join(" | ", metrics.Select(SweepMetrics.Label))} |");
        sb.AppendLine($"| --- | --- | --- | --- |{string.Concat(metrics.Select(_ => " ---: |"))}");
        foreach (var p in s.Points)
        {
            var cells = metrics.Select(m => p.Stats.TryGetValue(m, out var st)
                ? $"{SweepMetrics.Format(st.Median)} [{SweepMetrics.Format(st.Min)} – {SweepMetrics.Format(st.Max)}]"
                : "–");
            sb.AppendLine($"| {p.Id} | {Cell(p.Series)} | {p.X} | {p.Ok}/{p.Failed} | {string.Join(" | ", cells)} |");
        }
        sb.AppendLine();
        if (s.Failures.Count > 0)
        {
            sb.AppendLine("## Failed runs").AppendLine();
            foreach (var f in s.Failures) sb.AppendLine($"- {Cell(f)}");
            sb.AppendLine();
        }
        sb.Append("Files: sweep.csv (one row per run), sweep.json (this report's numbers), state.json (resume), ");
        sb.AppendLine(CultureInfo.InvariantCulture,
            $"runs/ (each run's workload.json{(s.Settings.Traced ? ", trace.dat, report.json" : "")}).");
        return sb.ToString();
    }

    private static string Cell(string s) => s.Replace("|", "\\|");
}
