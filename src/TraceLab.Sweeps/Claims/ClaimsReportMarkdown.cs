using System.Globalization;
using System.Text;

namespace TraceLab.Sweeps.Claims;

/// <summary>claims.md: the claims report as markdown (verdict table, undecidable claims, then every figure).</summary>
public static class ClaimsReportMarkdown
{
    public static string Write(ClaimsReport r, DateTimeOffset written)
    {
        var sb = new StringBuilder();
        sb.AppendLine("# Seed claims: verdicts measured on this machine").AppendLine();
        sb.AppendLine("The claims are defined in [claims.md](claims.md); how a sweep turns runs into a verdict in "
            + "[sweeps.md](sweeps.md#verdicts). Regenerate with `tracelab claims" + Flags(r)
            + "` (or measure again with `tracelab claims --run" + Flags(r) + "`).").AppendLine();
        foreach (var line in Header(r, written)) sb.AppendLine("- " + line);
        sb.AppendLine();

        sb.AppendLine("## Verdicts").AppendLine();
        sb.AppendLine("| claim | verdict | sweep | runs ok / planned | shortest point | others' CPU share "
            + "| decidable here |");
        sb.AppendLine("| --- | --- | --- | --- | ---: | ---: | --- |");
        foreach (var c in r.Claims)
        {
            var s = c.Sweep;
            var runs = s.Measured ? I($"{s.RunsOk} / {s.RunsPlanned}{(s.Complete ? "" : " (incomplete)")}") : "–";
            var shortest = s.ShortestPointSeconds is { } t ? Seconds(t) : "–";
            var foreign = s.ForeignShare is { } f ? I($"{f * 100:0} %") : "–";
            sb.AppendLine($"| [{c.Claim.Id}](claims.md#{c.Claim.Id}) | **{c.Outcome}** | `{Name(s)}` | {runs} | "
                + $"{shortest} | {foreign} | {Cell(c.Decision)} |");
        }
        sb.AppendLine();

        var undecidable = r.Claims.Where(c => !c.Decidable).ToList();
        sb.AppendLine("## Claims this machine cannot decide").AppendLine();
        if (undecidable.Count == 0) sb.AppendLine("None.").AppendLine();
        foreach (var c in undecidable)
        {
            sb.AppendLine($"- **{c.Claim.Id}** ({c.Outcome} here) — {c.Why}.");
            if (c.Claim.LargerMachine is { } l) sb.AppendLine($"  A larger machine would have to show: {l}");
        }
        if (undecidable.Count > 0) sb.AppendLine();
        var others = r.Claims.Where(c => c.Decidable && c.Claim.LargerMachine is not null).ToList();
        if (others.Count > 0)
        {
            sb.AppendLine("## What a larger machine would have to show for the SMP claims decided here").AppendLine();
            foreach (var c in others) sb.AppendLine($"- **{c.Claim.Id}**: {c.Claim.LargerMachine}");
            sb.AppendLine();
        }

        sb.AppendLine("## The figures behind each verdict").AppendLine();
        sb.AppendLine("Medians with [min–max] over the repeats, as each rule used them "
                + "(names: docs/sweeps.md, docs/metrics.md).")
            .AppendLine();
        foreach (var c in r.Claims)
        {
            sb.AppendLine($"### {c.Claim.Id}: {c.Outcome}").AppendLine();
            sb.AppendLine($"> {c.Claim.Text}").AppendLine();
            var s = c.Sweep;
            if (!s.Measured)
            {
                sb.AppendLine($"Sweep `{Name(s)}` has not run (no {s.Definition.Name}/state.json).").AppendLine();
                continue;
            }
            sb.AppendLine($"Sweep `{Name(s)}` ({s.Definition.Title}): {s.RunsOk} runs ok, "
                + I($"{s.RunsFailed} failed of {s.RunsPlanned}, {s.Repeats} repeats{Overrides(s)}; ")
                + $"{Window(s)}.").AppendLine();
            if (s.Calibration is { Count: > 0 } cal)
                sb.AppendLine("Calibrated iterations per series (docs/sweeps.md#calibration): "
                    + string.Join("; ", cal.Select(x => I($"{x.Series} {x.Value:#,0}")))).AppendLine();
            if (s.Reruns.Count > 0)
                sb.AppendLine("Measured again with a larger count (median under the minimum): "
                    + string.Join("; ", s.Reruns.Select(x =>
                        I($"p{x.Point:00} {x.Parameter} {x.FromValue:#,0} → {x.ToValue:#,0} ")
                        + I($"(median {x.MedianSeconds:0.###} s)")))).AppendLine();
            if (s.CalibrationWarning is { } cw) sb.AppendLine($"**{cw}**").AppendLine();
            if (s.ShortRunWarning is { } w) sb.AppendLine($"**{w}**").AppendLine();
            foreach (var a in c.Aspects)
            {
                sb.AppendLine($"- {a.Aspect}: **{a.OutcomeText}**");
                foreach (var e in a.Evidence) sb.AppendLine($"  - {e}");
            }
            sb.AppendLine();
        }
        return sb.ToString();
    }

    /// <summary>Results folder, machine, dates and load: the lines above the table (and the terminal's).</summary>
    public static IEnumerable<string> Header(ClaimsReport r, DateTimeOffset written)
    {
        var mode = (r.Quick ? "`--quick` run: smaller sizes, for a first look" : "full run")
            + (r.Traced ? "; traced: every run captured and analyzed, so times include the capture's cost" : "");
        yield return $"results: `{Shown(r.Directory)}` ({mode}); "
            + $"{r.Sweeps.Count(s => s.Measured && s.Complete)} of {r.Sweeps.Count} sweeps complete";
        yield return r.FirstRunUtc is { } a && r.LastRunUtc is { } b
            ? $"measured {Stamp(a)} – {Stamp(b)} UTC; report written {Stamp(written)} UTC"
            : $"nothing measured yet; report written {Stamp(written)} UTC";
        if (r.Machine is { } m)
            yield return $"machine: {m.Cpus} CPUs{(m.CpuModel is { } model ? $" ({model})" : "")}, {m.Os}"
                + $"{(m.Kernel is { } k ? $", kernel {k}" : "")}, {m.Runtime}";
        if (r.LoadAverages.Count > 0)
        {
            var l = r.LoadAverages.Order().ToList();
            yield return I($"load during the run: 1-minute load average {l[0]:0.##} – {l[^1]:0.##} ")
                + I($"(median {l[l.Count / 2]:0.##}, {l.Count} samples); it counts the workloads' own threads too. ")
                + "Other processes' share of the CPUs "
                + "(busy time minus the runs' own CPU time) is per sweep in the table: the machine may be shared";
        }
    }

    /// <summary>A folder inside the current directory, relative to it (valid if the tree moves).</summary>
    private static string Shown(string directory)
    {
        var relative = Path.GetRelativePath(Environment.CurrentDirectory, directory);
        var outside = relative.StartsWith("..", StringComparison.Ordinal) || Path.IsPathRooted(relative);
        return outside ? directory : relative;
    }

    private static string Window(SweepResult s)
    {
        var when = s.FirstRunUtc is { } a && s.LastRunUtc is { } b
            ? $"runs {Stamp(a)} – {Stamp(b)} UTC" : "no run recorded";
        var loads = s.LoadAverages.Order().ToList();
        return loads.Count == 0 ? when : I($"{when}, load average {loads[0]:0.##} – {loads[^1]:0.##}");
    }

    private static string Overrides(SweepResult s) =>
        s.Overrides.Count == 0 ? "" : "; sizes " + string.Join(", ", s.Overrides.Select(kv => $"{kv.Key}={kv.Value}"));

    private static string Flags(ClaimsReport r) => ClaimsRunPlan.Flags(r.Quick, r.Traced);

    private static string Seconds(double s) => s >= 1 ? I($"{s:0.##} s") : I($"{s * 1000:0.#} ms");

    private static string Name(SweepResult s) => $"{s.Definition.Workload} {s.Definition.Name}";

    private static string Stamp(DateTimeOffset t) =>
        t.UtcDateTime.ToString("yyyy-MM-dd HH:mm", CultureInfo.InvariantCulture);

    private static string Cell(string s) => s.Replace("|", "\\|");

    private static string I(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);
}
