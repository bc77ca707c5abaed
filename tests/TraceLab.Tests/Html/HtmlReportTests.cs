using System.Net;
using System.Text.RegularExpressions;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Charts;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Html;
using TraceLab.Workloads;

namespace TraceLab.Tests.Html;

/// <summary>
/// report.html of the mutex sample, checked as text: report.md's numbers, self-containment, timeline rows.
/// </summary>
public sealed partial class HtmlReportTests
{
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex");

    internal static (RunReport Report, TimelineData Timeline) Analyze(TimelineWindow window)
    {
        var workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(Sample, "workload.json")), "workload.json");
        var (report, timeline) =
            TraceAnalysis.Run(
                new AnalysisRequest(Path.Combine(Sample, "trace.dat")) { Workload = workload, Timeline = window });
        return (report, timeline!);
    }

    private static readonly Lazy<(RunReport Report, TimelineData Timeline, string Html)> Page = new(() =>
    {
        var (report, timeline) = Analyze(TimelineWindow.Default);
        return (report, timeline, HtmlReport.Render(report, timeline, charts: Drawn(report)));
    });

    /// <summary>The report's charts, drawn, as report.html embeds them; null where the drawing library cannot
    /// load.</summary>
    internal static List<EmbeddedChart>? Drawn(RunReport report) => ChartLibrary.Unavailable is not null ? null
        : ReportChartImages.Render(report.Charts)
            .Select(i => new EmbeddedChart(i.Name, i.Title, i.Png, i.Width, i.Height)).ToList();

    [ChartsFact]
    public void Charts_are_embedded_as_data_pngs_after_the_timeline()
    {
        var html = Page.Value.Html;
        var figures = Regex.Matches(html, "<figure class=\"card chart\" id=\"([a-z-]+)\">")
            .Select(m => m.Groups[1].Value);
        Assert.Equal(["chart-thread-states", "chart-ready-latency", "chart-handoff-gaps", "chart-wakers"], figures);
        // A PNG's first bytes (89 50 4E 47 0D 0A 1A 0A) in base64: iVBORw0KGgo.
        var png = "<img alt=\"[^\"]+\" width=\"\\d+\" height=\"\\d+\" src=\"data:image/png;base64,iVBORw0KGgo";
        Assert.Equal(4, Regex.Count(html, png));
        Assert.True(html.IndexOf("id=\"thread-timeline\"", StringComparison.Ordinal)
            < html.IndexOf("id=\"charts\"", StringComparison.Ordinal));
    }

    /// <summary>
    /// The base64 is written in pieces (HtmlReport.WriteBase64): each image must still decode to its chart's PNG, byte
    /// for byte, the pieces' joins and the padded end included.
    /// </summary>
    [ChartsFact]
    public void Each_embedded_image_is_its_charts_png_whole()
    {
        var (report, timeline, _) = Page.Value;
        // PNGs several pieces long, and one whose length is no multiple of 3 (padding only at the end).
        var drawn = Drawn(report)!;
        Assert.Contains(drawn, c => c.Png.Length > 3 * 3 * 1024 && c.Png.Length % 3 != 0);
        var html = HtmlReport.Render(report, timeline, charts: drawn);
        var embedded = Regex.Matches(html, "src=\"data:image/png;base64,([A-Za-z0-9+/=]+)\"")
            .Select(m => Convert.FromBase64String(m.Groups[1].Value)).ToList();
        Assert.Equal(drawn.Select(c => c.Png), embedded);
    }

    [Fact]
    public void Every_table_of_report_md_is_in_the_page_cell_for_cell()
    {
        var md = ReportMarkdown.Render(Page.Value.Report);
        var mdCells = md.Split('\n').Where(l => l.StartsWith('|') && !l.Contains("---", StringComparison.Ordinal))
            .SelectMany(MarkdownHtml.Cells).Select(c => c.Replace("`", "", StringComparison.Ordinal)).ToList();
        // The page's tables other than the timeline's own, in order.
        var html =
            Regex.Replace(Page.Value.Html, "<table id=\"timeline-threads\">.*?</table>", "", RegexOptions.Singleline);
        var htmlCells = CellPattern().Matches(html)
            .Select(m => WebUtility.HtmlDecode(Regex.Replace(m.Groups[1].Value, "<[^>]+>", ""))).ToList();
        Assert.True(mdCells.Count > 100, $"only {mdCells.Count} cells in report.md");
        Assert.Equal(mdCells, htmlCells);
    }

    [Fact]
    public void Page_loads_nothing_from_anywhere()
    {
        var html = Page.Value.Html;
        Assert.DoesNotContain("<script src", html, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("<link", html, StringComparison.OrdinalIgnoreCase);
        // url() only for references inside the page (the SVG arrow markers).
        Assert.Equal(Regex.Count(html, "url\\("), Regex.Count(html, "url\\(#"));
        Assert.DoesNotContain("@import", html, StringComparison.OrdinalIgnoreCase);
        // The only URL is the SVG namespace name, which is never fetched.
        var urls = Regex.Matches(html, "https?://[^\"'\\s<)]+").Select(m => m.Value).Distinct().ToList();
        Assert.Equal(["http://www.w3.org/2000/svg"], urls);
    }

    [Fact]
    public void Timeline_has_one_row_per_reported_thread_and_the_window_numbers()
    {
        var (report, timeline, html) = Page.Value;
        var rows = Regex.Matches(html, "<g class=\"tl-row\" data-tid=\"(\\d+)\"")
            .Select(m => int.Parse(m.Groups[1].Value)).ToList();
        Assert.Equal(report.Threads.Select(t => t.Tid), rows);
        Assert.Contains("Window <b>10.000–11.000 ms</b>", html);
        // Drawn items are the recorded ones: every segment of a reported thread, in a rect of its own or in a stacked
        // column of segments narrower than a pixel; a handoff arrow per handoff.
        var tids = report.Threads.Select(t => t.Tid).ToHashSet();
        var segments = Regex.Count(html, "<rect class=\"seg ")
            + Regex.Matches(html, "<g class=\"mix\" data-segments=\"(\\d+)\"").Sum(m => int.Parse(m.Groups[1].Value));
        Assert.Equal(timeline.Segments.Count(s => tids.Contains(s.Tid)), segments);
        // A handoff whose wakeup precedes the window (only its run is inside) has no arrow in it.
        var arrows = timeline.Handoffs.Count(h => h.WokenAt >= timeline.Start && h.WokenAt <= timeline.End);
        Assert.Equal(arrows, Regex.Count(html, "<line class=\"wake handoff\""));
        Assert.True(arrows > 10, "the window shows the convoy");
        Assert.Equal(timeline.Episodes.Count, Regex.Count(html, "<rect class=\"episode\""));
        // The page's counts are of what it draws (an arrow or a tick per wakeup); the sample's recording threads,
        // which are not reported, are counted apart.
        var wakes = Regex.Count(html, "<line class=\"wake[ \"]") + Regex.Count(html, "<path class=\"wake-ext\"");
        Assert.Contains($"{segments:N0} segments, {wakes:N0} wakeups ({arrows:N0} lock handoffs)", html);
        Assert.True(timeline.Segments.Count > segments, "the sample records threads it does not report");
        Assert.Contains($"threads not drawn have {timeline.Segments.Count - segments:N0} more segments", html);
    }

    [Fact]
    public void Wake_arrows_above_one_per_pixel_start_hidden_and_the_page_says_so()
    {
        var (report, timeline, html) = Page.Value;
        // The sample's window has fewer than one per pixel: drawn, their box ticked.
        Assert.Contains("<g class=\"tl-wakes\">", html, StringComparison.Ordinal);
        Assert.Contains("<input type=\"checkbox\" checked data-toggle=\"#timeline .tl-wakes\">", html,
            StringComparison.Ordinal);
        Assert.DoesNotContain("Hidden at first", html, StringComparison.Ordinal);
        var tids = report.Threads.Select(t => t.Tid).ToList();
        var dense = new TimelineData
        {
            Window = timeline.Window,
            Start = timeline.Start,
            End = timeline.End,
            Anchor = timeline.Anchor,
            Segments = timeline.Segments,
            Wakes = Enumerable.Range(0, TimelineSvg.MaxShownMarks + 1)
                .Select(i => new TimelineWake(timeline.Start + i, tids[0], tids[1], 0)).ToList(),
            Episodes = timeline.Episodes,
            Handoffs = timeline.Handoffs,
            FutileWakeups = timeline.FutileWakeups,
            HasConvoys = timeline.HasConvoys,
            HasWakeups = timeline.HasWakeups,
        };
        var page = HtmlReport.Render(report, dense);
        Assert.Contains("<g class=\"tl-wakes\" style=\"display:none\">", page, StringComparison.Ordinal);
        Assert.Contains("<input type=\"checkbox\" data-toggle=\"#timeline .tl-wakes\">", page,
            StringComparison.Ordinal);
        Assert.Contains("<b>Hidden at first:</b> the 1,001 wake arrows, more than one per pixel of the window", page,
            StringComparison.Ordinal);
        // Each kind on its own: the sample's few futile wakeups stay drawn.
        Assert.Contains("<g class=\"tl-futile\">", page, StringComparison.Ordinal);
        Assert.Equal(TimelineSvg.MaxShownMarks + 1, Regex.Count(page, "<line class=\"wake\" "));
    }

    [Fact]
    public void Window_covering_the_region_gives_the_reports_thread_times()
    {
        // Against ThreadAccounting's per-thread times (report.md), a separate state machine: runnable and blocked
        // time agree exactly; running time too, except where a switch-in was repaired (report: repairedStarts),
        // whose evidence the two place differently (a few tenths of a percent).
        var (report, _) = Analyze(TimelineWindow.Default);
        var (_, whole) = Analyze(new TimelineWindow(0, report.Region.DurationNs));
        foreach (var t in report.Threads)
        {
            var w = TimelineSummary.For(whole, t.Tid);
            Assert.Equal((t.ReadyNs, t.WaitNs), (w.RunnableNs, w.BlockedNs));
            if (t.RepairedStarts == 0) Assert.Equal(t.RunNs, w.RunningNs);
            Assert.InRange(w.RunningNs, t.RunNs * 0.995, t.RunNs * 1.005);
        }
    }

    [Fact]
    public void Given_svg_plots_are_embedded_inline()
    {
        using var dir = new TempDirectory("tracelab-plot");
        var file = dir.File("sweep.svg");
        File.WriteAllText(file, "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
            + "id=\"sweep-plot\"><circle r=\"3\"/></svg>");
        var html = HtmlReport.Render(
            Page.Value.Report, Page.Value.Timeline, [EmbeddedPlot.FromFile(file, "ready latency vs threads")]);
        Assert.Contains("<figcaption>ready latency vs threads</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
            + "id=\"sweep-plot\">", html);
        Assert.DoesNotContain("<?xml", html);
    }

    [GeneratedRegex("<t[dh][^>]*>(.*?)</t[dh]>", RegexOptions.Singleline)]
    private static partial Regex CellPattern();
}
