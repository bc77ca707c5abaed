using System.Text.RegularExpressions;
using TraceLab.Analyzers.Timeline;
using TraceLab.Reporting.Html;

namespace TraceLab.Tests.Html;

/// <summary>
/// report.html rendered by headless Chromium: scripts run without error and the timeline shows one row per thread.
/// </summary>
public sealed class HtmlReportChromiumTests
{
    [ChromiumFact]
    public void Report_renders_without_script_errors_with_one_timeline_row_per_thread()
    {
        var (report, timeline) = HtmlReportTests.Analyze(TimelineWindow.Default);
        using var dir = new TempDirectory("tracelab-html");
        var page = dir.File("report.html");
        var charts = HtmlReportTests.Drawn(report);
        File.WriteAllText(page, HtmlReport.Render(report, timeline, charts: charts));

        var dom = HeadlessChromium.DumpDom(page);
        // The page's script marks the root element when it has run, and records any error.
        var root = Regex.Match(dom, "<html[^>]*>").Value;
        Assert.Contains("data-ready=\"1\"", root);
        Assert.DoesNotContain("data-error", root);
        Assert.Contains($"data-timeline-rows=\"{report.Threads.Count}\"", root);
        var rows =
            Regex.Matches(dom, "<g class=\"tl-row\" data-tid=\"(\\d+)\"").Select(m => int.Parse(m.Groups[1].Value));
        Assert.Equal(report.Threads.Select(t => t.Tid), rows);
        // Every embedded chart decoded (none where the drawing library cannot load on this machine).
        Assert.Contains($"data-charts-drawn=\"{charts?.Count ?? 0}\"", root);

        var png = dir.File("report.png");
        var log = HeadlessChromium.Screenshot(page, png);
        Assert.DoesNotContain("Uncaught", log);
        var bytes = File.ReadAllBytes(png);
        Assert.True(bytes.Length > 20_000, $"screenshot is only {bytes.Length} bytes");
        Assert.Equal([0x89, (byte)'P', (byte)'N', (byte)'G'], bytes[..4]);
    }

    [ChromiumFact]
    public void A_script_error_would_be_seen()
    {
        // The check above is only worth something if a failing script shows up in the dumped DOM.
        using var dir = new TempDirectory("tracelab-html");
        var page = dir.File("broken.html");
        File.WriteAllText(page, "<!DOCTYPE html><html data-ready=\"0\"><body><script>window.addEventListener('error', "
            + "function (e) { document.documentElement.setAttribute('data-error', e.message); }); "
            + "nosuchfunction();</script></body></html>");
        var root = Regex.Match(HeadlessChromium.DumpDom(page), "<html[^>]*>").Value;
        Assert.Contains("data-error=", root);
        Assert.Contains("data-ready=\"0\"", root);
    }
}
