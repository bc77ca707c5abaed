using System.Globalization;
using System.Text;

namespace TraceLab.Reporting.Findings;

/// <summary>report.md's "Findings" section, which opens the report, before any table.</summary>
public static class FindingsMarkdown
{
    public const string Heading = "## Findings";

    public static void Render(StringBuilder sb, IReadOnlyList<FindingSection> findings)
    {
        sb.AppendLine(Heading).AppendLine();
        if (findings.Count == 0)
        {
            sb.AppendLine($"No findings above the floor ({FloorText}). Definitions: docs/metrics.md, \"Findings\".").AppendLine();
            return;
        }
        sb.AppendLine($"Ranked by severity: the share of the reported threads' time (run + ready + wait) each one explains; " +
            $"none below {FloorText}. Rules and thresholds: docs/metrics.md, \"Findings\".").AppendLine();
        for (var i = 0; i < findings.Count; i++)
        {
            var f = findings[i];
            sb.AppendLine($"### {i + 1}. {f.Title} — {Percent(f.Severity)}").AppendLine();
            sb.AppendLine($"- Kind: `{f.Kind}`; threads: {(f.Threads.Count == 0 ? "—" : string.Join(", ", f.Threads))}" +
                $"{(f.Objects.Count == 0 ? "" : "; objects: " + string.Join(", ", f.Objects))}");
            sb.AppendLine($"- Evidence: {string.Join("; ", f.Evidence.Select(e => $"`{e.Metric}` = {Value(e.Value)}"))}");
            if (f.Windows.Count > 0)
                sb.AppendLine($"- Worst windows (`--timeline-window`, ms from the region's begin): {string.Join(", ", f.Windows.Select(w => $"`{w}`"))}");
            sb.AppendLine($"- Remedy: {f.Remedy} (claims: {string.Join(", ", f.Claims)}, docs/claims.md)");
            sb.AppendLine();
        }
    }

    public static string FloorText => $"{Percent(FindingEngine.SeverityFloor)} of the reported threads' time";

    public static string Percent(double share) => (share * 100).ToString("0.#", CultureInfo.InvariantCulture) + " %";

    public static string Value(double v) =>
        v == Math.Floor(v) && Math.Abs(v) < 1e15 ? ((long)v).ToString("N0", CultureInfo.InvariantCulture) : v.ToString("0.####", CultureInfo.InvariantCulture);
}
