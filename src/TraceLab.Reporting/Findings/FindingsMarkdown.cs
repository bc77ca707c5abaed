using System.Globalization;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Findings;

/// <summary>The "Findings" section as report.md lines and terminal lines; it opens the report, before any
/// table.</summary>
public static class FindingsMarkdown
{
    public const string Heading = "## Findings";

    /// <param name="findings">The ranked findings.</param>
    /// <param name="hasSwitches">
    /// Whether the trace logged context switches. Without them no wait is measured, so an empty list says nothing
    /// about the program: the section says that rather than "no findings".
    /// </param>
    public static IReadOnlyList<ReportBlock> View(IReadOnlyList<FindingSection> findings, bool hasSwitches) =>
        [new MarkdownText([.. Markdown(findings, hasSwitches)]),
            .. Terminal(findings, hasSwitches).Select(line => new TerminalLine(line))];

    /// <summary>Why an empty list of findings means nothing (docs/metrics.md#findings-floor).</summary>
    public const string NoSwitches = "the trace has no context switches, so no thread's waits were measured";

    public static IEnumerable<string> Markdown(IReadOnlyList<FindingSection> findings, bool hasSwitches)
    {
        yield return Heading;
        yield return "";
        if (findings.Count == 0 && !hasSwitches)
        {
            yield return $"No findings can be judged: {NoSwitches} (see the warnings).";
            yield return "";
            yield break;
        }
        if (findings.Count == 0)
        {
            yield return $"No findings above the floor ({FloorText}). Definitions: docs/metrics.md, \"Findings\".";
            yield return "";
            yield break;
        }
        yield return "Ranked by severity: the share of the reported threads' time (run + ready + wait) each one " +
            "explains; " +
            $"none below {FloorText}. Rules and thresholds: docs/metrics.md, \"Findings\".";
        yield return "";
        for (var i = 0; i < findings.Count; i++)
        {
            var f = findings[i];
            yield return $"### {i + 1}. {f.Title} — {Percent(f.Severity)}";
            yield return "";
            var threads = f.Threads.Count == 0 ? "—" : string.Join(", ", f.Threads);
            yield return $"- Kind: `{f.Kind}`; threads: {threads}" +
                (f.Objects.Count == 0 ? "" : "; objects: " + string.Join(", ", f.Objects));
            if (f.Where is not null)
                yield return $"- Where (heaviest blocking stack of these threads, innermost first): `{f.Where}`";
            yield return $"- Evidence: {string.Join("; ", f.Evidence.Select(e => $"`{e.Metric}` = {Value(e.Value)}"))}";
            if (f.Windows.Count > 0)
                yield return "- Worst windows (`--timeline-window`, ms from the region's begin): " +
                    string.Join(", ", f.Windows.Select(w => $"`{w}`"));
            // A finding no seed claim is about (cpu-contention) cites none.
            yield return f.Claims.Count > 0
                ? $"- Remedy: {f.Remedy} (claims: {string.Join(", ", f.Claims)}, docs/claims.md)"
                : $"- Remedy: {f.Remedy}";
            yield return "";
        }
    }

    public static IEnumerable<string> Terminal(IReadOnlyList<FindingSection> findings, bool hasSwitches)
    {
        if (findings.Count == 0 && !hasSwitches)
        {
            yield return $"[bold]Findings[/] [yellow]none can be judged:[/] {NoSwitches} (see the warnings)";
            yield break;
        }
        if (findings.Count == 0)
        {
            yield return $"[bold]Findings[/] [green]no findings above the floor[/] ({Format.Escape(FloorText)})";
            yield break;
        }
        yield return "[bold]Findings[/] ranked by the share of the reported threads' time each explains " +
            "(docs/metrics.md, Findings)";
        for (var i = 0; i < findings.Count; i++)
        {
            var f = findings[i];
            yield return $"[bold red]{i + 1}. {Format.Escape(Percent(f.Severity))}[/] " +
                $"[bold]{Format.Escape(f.Title)}[/] [grey]({Format.Escape(f.Kind)})[/]";
            if (f.Where is not null) yield return $"   [grey]where:[/] {Format.Escape(f.Where)}";
            var evidence = string.Join("; ", f.Evidence.Select(e => $"{e.Metric} = {Value(e.Value)}"));
            yield return $"   [grey]evidence:[/] {Format.Escape(evidence)}";
            if (f.Windows.Count > 0)
                yield return "   [grey]worst windows (--timeline-window):[/] "
                    + Format.Escape(string.Join(", ", f.Windows));
            var claims = f.Claims.Count > 0 ? $" [grey]({Format.Escape(string.Join(", ", f.Claims))})[/]" : "";
            yield return $"   [grey]remedy:[/] {Format.Escape(f.Remedy)}{claims}";
        }
    }

    public static string FloorText => $"{Percent(FindingEngine.SeverityFloor)} of the reported threads' time";

    public static string Percent(double share) => (share * 100).ToString("0.#", CultureInfo.InvariantCulture) + " %";

    public static string Value(double v) =>
        v == Math.Floor(v) && Math.Abs(v) < 1e15
            ? ((long)v).ToString("N0", CultureInfo.InvariantCulture)
            : v.ToString("0.####", CultureInfo.InvariantCulture);
}
