using System.Globalization;
using System.Net;
using System.Text;
using TraceLab.Analyzers.Timeline;
using TraceLab.Reporting.Findings;

namespace TraceLab.Reporting.Html;

/// <summary>
/// report.html: report.md's tables as HTML (same numbers), the thread timeline of one window as inline SVG, and any
/// embedded plots; self-contained (inline CSS, script and SVG, no network). See docs/viewers.md.
/// </summary>
public static class HtmlReport
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    /// <summary>Text a builder of the page collects before it is written out.</summary>
    internal const int SpillChars = 1 << 16;

    /// <summary>
    /// A builder that holds <see cref="SpillChars"/> and one more item in one block: one that grew in blocks makes a
    /// new array of its whole size when it is cleared (StringBuilder.Length), a large object.
    /// </summary>
    internal static StringBuilder SpillBuffer() => new(SpillChars + 8192);

    /// <param name="charts">The report's charts, drawn (null: not drawn, e.g. --no-charts; the page says so).</param>
    /// <param name="chartsNote">Why the charts are missing, when they are (e.g. the drawing library could not
    /// load).</param>
    public static string Render(RunReport report, TimelineData? timeline, IReadOnlyList<EmbeddedPlot>? plots = null,
        IReadOnlyList<EmbeddedChart>? charts = null, string? chartsNote = null) =>
        RenderWithMarkdown(report, ReportMarkdown.Render(report), timeline, plots, charts, chartsNote);

    /// <summary>As <see cref="Render"/>, from report.md's text already rendered (callers that write both).</summary>
    public static string RenderWithMarkdown(RunReport report, string markdown, TimelineData? timeline,
        IReadOnlyList<EmbeddedPlot>? plots = null, IReadOnlyList<EmbeddedChart>? charts = null,
        string? chartsNote = null)
    {
        using var html = new StringWriter(CultureInfo.CurrentCulture);
        Write(html, report, markdown, timeline, plots, () => (charts, chartsNote));
        return html.ToString();
    }

    /// <summary>
    /// As <see cref="RenderWithMarkdown"/>, written to <paramref name="stream"/> (UTF-8) as it is produced: the page
    /// of a whole system is 100+ MB of text, which as one string (and the builder it was made in) set the peak
    /// memory of `analyze` (docs/performance.md#many-threads).
    /// </summary>
    public static void Write(Stream stream, RunReport report, string markdown, TimelineData? timeline,
        IReadOnlyList<EmbeddedPlot>? plots = null, IReadOnlyList<EmbeddedChart>? charts = null,
        string? chartsNote = null) =>
        Write(stream, report, markdown, timeline, () => (charts, chartsNote), plots);

    /// <summary>
    /// As <see cref="Write(Stream, RunReport, string, TimelineData?, IReadOnlyList{EmbeddedPlot}?,
    /// IReadOnlyList{EmbeddedChart}?, string?)"/>, asking for the charts only where the page shows them: the summary
    /// and the timeline above them (most of a system report's page) are written while they are still being drawn.
    /// </summary>
    /// <param name="charts">Gives the drawn charts (null: not drawn) and why they are missing, when they are; called
    /// once, after the timeline is written.</param>
    public static void Write(Stream stream, RunReport report, string markdown, TimelineData? timeline,
        Func<(IReadOnlyList<EmbeddedChart>? Charts, string? Note)> charts, IReadOnlyList<EmbeddedPlot>? plots = null)
    {
        using var html = new StreamWriter(stream, Utf8NoBom, 1 << 16, leaveOpen: true);
        Write(html, report, markdown, timeline, plots, charts);
    }

    private static readonly UTF8Encoding Utf8NoBom = new(encoderShouldEmitUTF8Identifier: false);

    private static void Write(TextWriter html, RunReport report, string markdown, TimelineData? timeline,
        IReadOnlyList<EmbeddedPlot>? plots, Func<(IReadOnlyList<EmbeddedChart>? Charts, string? Note)> charts)
    {
        // The page title and run summary first, then the timeline, then report.md's sections.
        // The findings open the page: they stay with the summary, above the timeline.
        var split = markdown.IndexOf("\n## ", StringComparison.Ordinal);
        if (split >= 0 && markdown.AsSpan(split + 1).StartsWith(FindingsMarkdown.Heading, StringComparison.Ordinal))
            split = markdown.IndexOf("\n## ", split + 1, StringComparison.Ordinal);
        var headEnd = split < 0 ? markdown.Length : split + 1;
        var title = report.Run is null ? "TraceLab analysis"
            : $"TraceLab: {report.Run.Workload} {report.Run.Scenario}".TrimEnd();

        html.Write("<!DOCTYPE html>\n<html lang=\"en\" data-ready=\"0\">\n<head>\n<meta charset=\"utf-8\">\n");
        html.Write("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        html.Write("<title>");
        html.Write(WebUtility.HtmlEncode(title));
        html.Write("</title>\n<style>\n");
        html.Write(HtmlAssets.Css);
        html.Write("\n</style>\n</head>\n<body>\n<main>\n");
        MarkdownHtml.Write(html, markdown, 0, headEnd);
        Timeline(html, report, timeline);
        var (drawn, note) = charts();
        Charts(html, drawn, note);
        MarkdownHtml.Write(html, markdown, headEnd, markdown.Length);
        if (plots is { Count: > 0 })
        {
            html.Write("<h2 id=\"plots\">Plots</h2>\n");
            foreach (var p in plots)
            {
                html.Write("<figure class=\"card plot\"><figcaption>");
                html.Write(WebUtility.HtmlEncode(p.Title));
                html.Write("</figcaption>\n");
                html.Write(p.Svg);
                html.Write("\n</figure>\n");
            }
        }
        html.Write(
            "<footer>Written by TraceLab. Definitions: docs/metrics.md; how to open the trace in other viewers: " +
            "docs/viewers.md.</footer>\n");
        html.Write("</main>\n<script>\n");
        html.Write(HtmlAssets.Script);
        html.Write("\n</script>\n</body>\n</html>\n");
    }

    private static void Charts(TextWriter html, IReadOnlyList<EmbeddedChart>? charts, string? note)
    {
        if (charts is null && note is null) return;
        html.Write("<h2 id=\"charts\">Charts</h2>\n");
        if (note is not null) html.Write($"<p class=\"note\">{WebUtility.HtmlEncode(note)}</p>\n");
        if (charts is { Count: 0 })
            html.Write("<p class=\"note\">Nothing to chart: no ready latencies, handoffs or wakeups among the reported "
                + "threads.</p>\n");
        foreach (var c in charts ?? [])
        {
            var name = WebUtility.HtmlEncode(c.Name);
            // The picture carries its title: no caption above it.
            html.Write(string.Create(Inv, $"<figure class=\"card chart\" id=\"{name}\">\n"));
            html.Write(string.Create(Inv,
                $"<img alt=\"{WebUtility.HtmlEncode(c.Title)}\" width=\"{c.Width}\" height=\"{c.Height}\" "));
            html.Write("src=\"data:image/png;base64,");
            WriteBase64(html, c.Png);
            html.Write("\">\n");
            html.Write($"<p class=\"note\">Also beside this report: {name}.png and {name}.svg.</p></figure>\n");
        }
    }

    /// <summary>
    /// <paramref name="bytes"/> as base64, written a piece at a time: a chart's PNG as one base64 string was a large
    /// object of new memory for each chart, on report.html's thread, the last of the run
    /// (docs/performance.md#opaque-png).
    /// </summary>
    private static void WriteBase64(TextWriter html, ReadOnlySpan<byte> bytes)
    {
        // Whole groups of 3 bytes per piece, so that only the last piece is padded: the same text as the whole.
        const int PieceBytes = 3 * 1024;
        Span<char> chars = stackalloc char[PieceBytes / 3 * 4];
        while (!bytes.IsEmpty)
        {
            var piece = bytes[..Math.Min(PieceBytes, bytes.Length)];
            if (!Convert.TryToBase64Chars(piece, chars, out var written))
                throw new InvalidOperationException("base64 of a chart did not fit its buffer");
            html.Write(chars[..written]);
            bytes = bytes[piece.Length..];
        }
    }

    private static void Timeline(TextWriter html, RunReport report, TimelineData? data)
    {
        // Built in pieces and written out as it grows: one row per thread.
        var sb = SpillBuffer().Append("<h2 id=\"thread-timeline\">Thread timeline</h2>\n");
        if (data is null)
        {
            html.Write(sb.Append("<p class=\"note\">No timeline was recorded for this report.</p>\n"));
            return;
        }
        var names = report.Threads.ToDictionary(t => t.Tid, t => t.Name);
        string NameOf(int tid) => names.TryGetValue(tid, out var n) ? n : $"tid {tid}";
        var (threads, why, leftOut) = TimelineFocus.Rows(report);
        var rows = threads
            .Select(t => new TimelineRow(t.Tid, $"{t.Name} ({t.Tid}){(t.Role is null ? "" : " " + t.Role)}")).ToList();
        string Ms(long ns) => (ns / 1e6).ToString("0.000", Inv);

        var begin = data.Start - data.Anchor;
        var shown = data.End - data.Start;
        // The counts are of what the picture draws; a thread left out (a system report's rows, TraceLab's own
        // threads) is counted only in the clause after.
        var (segments, wakes, handoffArrows, futile) = TimelineSvg.Drawn(data, rows);
        sb.Append("<div class=\"card\">\n");
        sb.Append(Inv, $"<p>Window <b>{Ms(begin)}–{Ms(begin + shown)} ms</b> from the region's begin ({Ms(shown)} ms");
        if (shown < data.Window.LengthNs)
            sb.Append(Inv, $" of the {Ms(data.Window.LengthNs)} ms asked: the trace ends");
        sb.Append("; choose another with <code>--timeline-window START:LENGTH</code>, in ms). ");
        sb.Append($"{EnglishCount.Of(segments, "segment")}, {EnglishCount.Of(wakes, "wakeup")} ");
        sb.Append($"({EnglishCount.Of(handoffArrows, "lock handoff")}), ");
        sb.Append($"{EnglishCount.Of(data.Episodes.Count, "convoy episode")}, ");
        sb.Append($"{EnglishCount.Of(futile, "futile wakeup")} in the window");
        var undrawn = new List<string>();
        if (segments < data.Segments.Count)
            undrawn.Add(EnglishCount.Of(data.Segments.Count - segments, "more segment"));
        if (wakes < data.Wakes.Count) undrawn.Add(EnglishCount.Of(data.Wakes.Count - wakes, "more wakeup"));
        if (undrawn.Count > 0) sb.Append("; threads not drawn have ").Append(string.Join(" and ", undrawn));
        sb.Append('.');
        if (report.Region.EndNs > report.Region.BeginNs && data.Start >= report.Region.EndNs)
        {
            sb.Append(Inv, $" <b>The window starts after the measured region ends</b> (the region is ");
            sb.Append(Inv, $"{Ms(report.Region.DurationNs)} ms long): choose an earlier one.");
        }
        else if (data.Segments.Count == 0)
            sb.Append(
                " <b>Nothing to draw:</b> the window starts after the trace's last event; choose an earlier one.");
        if (why is not null)
        {
            // A system report: which threads and which window, and why (docs/metrics.md#timeline-focus).
            sb.Append(" Rows: ").Append(WebUtility.HtmlEncode(why));
            if (leftOut > 0) sb.Append(Inv, $" (the first {rows.Count}; {leftOut:N0} more are not drawn)");
            sb.Append(TimelineFocus.Window(report) == data.Window
                ? "; window: where the first finding is worst."
                : ".");
        }
        // Above one per pixel they would cover the rows: hidden until asked for (docs/metrics.md#timeline-dense-marks).
        var hidden = (Wakes: wakes > TimelineSvg.MaxShownMarks, Futile: futile > TimelineSvg.MaxShownMarks);
        if (hidden.Wakes || hidden.Futile)
        {
            var marks = new List<string>();
            if (hidden.Wakes) marks.Add(string.Create(Inv, $"the {wakes:N0} wake arrows"));
            if (hidden.Futile) marks.Add(string.Create(Inv, $"the {futile:N0} futile-wakeup dots"));
            sb.Append(" <b>Hidden at first:</b> ").Append(string.Join(" and ", marks));
            sb.Append(", more than one per pixel of the window: they would cover the rows (tick the boxes below ");
            sb.Append("to draw them).");
        }
        if (data.Truncated) sb.Append(
            " <b>Truncated:</b> the window held more items than the timeline keeps; later ones are not drawn.");
        sb.Append("</p>\n");
        sb.Append("<div class=\"legend\"><span><i class=\"sw run\"></i>running</span><span><i class=\"sw "
            + "ready\"></i>runnable</span><span><i class=\"sw blocked\"></i>blocked</span>");
        sb.Append("<span><i class=\"sw mix\"></i>segments narrower than a pixel, stacked by their time in each state"
            + "</span>");
        sb.Append("<span><i class=\"sw wake\"></i>wakeup (waker → wakee)</span><span><i class=\"sw handoff\"></i>lock "
            + "handoff</span><span><i class=\"sw episode\"></i>convoy episode</span><span><i class=\"sw "
            + "futile\"></i>futile wakeup</span></div>\n");
        string Checked(bool isHidden) => isHidden ? "" : " checked";
        sb.Append("<div class=\"controls\">");
        sb.Append($"<label><input type=\"checkbox\"{Checked(hidden.Wakes)} data-toggle=\"#timeline .tl-wakes\"> "
            + "wake arrows</label>");
        sb.Append(
            "<label><input type=\"checkbox\" checked data-toggle=\"#timeline .episode-band\"> convoy shading</label>");
        sb.Append($"<label><input type=\"checkbox\"{Checked(hidden.Futile)} data-toggle=\"#timeline .tl-futile\"> "
            + "futile wakeups</label></div>\n");
        html.Write(sb.Append("<div class=\"timeline-scroll\">\n"));
        sb.Clear();
        TimelineSvg.Write(html, data, rows, NameOf, hidden);
        sb.Append("\n</div>\n");
        if (!data.HasConvoys) sb.Append(
            "<p class=\"note\">The convoy analysis was not selected: no handoffs or episodes are drawn.</p>\n");

        // The window's numbers per thread (docs/metrics.md#timeline).
        sb.Append("<div class=\"table-wrap\"><table id=\"timeline-threads\">\n<thead><tr><th "
            + "class=\"num\">tid</th><th>name</th><th class=\"num\">running ms</th><th class=\"num\">runnable "
            + "ms</th><th class=\"num\">blocked ms</th><th class=\"num\">segments</th><th class=\"num\">wakeups "
            + "received</th></tr></thead>\n<tbody>\n");
        var totals = TimelineSummary.For(data, rows.Select(r => r.Tid));
        foreach (var row in rows)
        {
            var t = totals[row.Tid];
            if (sb.Length > SpillChars)
            {
                html.Write(sb);
                sb.Clear();
            }
            sb.Append(Inv, $"<tr><td class=\"num\">{row.Tid}</td><td>{WebUtility.HtmlEncode(NameOf(row.Tid))}</td>");
            sb.Append(Inv, $"<td class=\"num\">{Ms(t.RunningNs)}</td><td class=\"num\">{Ms(t.RunnableNs)}</td>");
            sb.Append(Inv, $"<td class=\"num\">{Ms(t.BlockedNs)}</td><td class=\"num\">{t.Segments:N0}</td>");
            sb.Append(Inv, $"<td class=\"num\">{t.WakesReceived:N0}</td></tr>\n");
        }
        html.Write(sb.Append("</tbody></table></div>\n</div>\n"));
    }
}
