using System.Runtime.ExceptionServices;
using TraceLab.Analyzers.Timeline;
using TraceLab.Charts;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Charts;
using TraceLab.Reporting.Html;

namespace TraceLab.Cli.Commands;

/// <summary>
/// Writes report.json, report.md and report.html into a run's output directory, and the report's charts
/// (chart-*.png and chart-*.svg, embedded in report.html too; docs/metrics.md, "Charts").
/// </summary>
public static class ReportFiles
{
    public static readonly string[] Names = ["report.md", "report.json", "report.html"];

    /// <summary>The chart files in <paramref name="output"/>, for the list of files a run prints.</summary>
    public static IEnumerable<string> ChartsIn(OutputDirectory output) =>
        Directory.EnumerateFiles(output.Path, "chart-*.*").Select(Path.GetFileName).OfType<string>()
            .Order(StringComparer.Ordinal);

    /// <param name="timeline">The thread timeline for report.html (null, or a recording that gives null: the page
    /// says none was recorded); report.html waits for a recording still under way, the other files do not.</param>
    /// <param name="plots">SVG plots to embed in report.html (e.g. a sweep's).</param>
    /// <param name="charts">Draw the charts (false: --no-charts, and sweep runs, which keep only report.json's
    /// figures).</param>
    /// <returns>The files written, report files first; and why the charts are missing when they could not be
    /// drawn.</returns>
    /// <param name="drawing">The charts' drawing, when it started earlier (<see cref="StartCharts"/>); null: it
    /// starts here.</param>
    public static WrittenReport Write(OutputDirectory output, RunReport report, Task<TimelineData?>? timeline = null,
        IReadOnlyList<EmbeddedPlot>? plots = null, bool charts = true, Task<IReadOnlyList<ChartImage>>? drawing = null)
    {
        // Charts render on another thread while the text reports are written: their start-up and drawing overlap
        // the JSON and Markdown work.
        var rendering = charts ? drawing ?? StartCharts(report.Charts) : null;
        // report.json is written beside report.md and report.html: each only reads the finished report (its
        // sections are complete before any renderer starts; each renderer builds its own tables and rows).
        // On a thread of its own: the thread pool's threads (two on two CPUs) may all be drawing the charts.
        var json = BackgroundWork.RunOnOwnThread(_ =>
        {
            using (StageTimes.Begin("report.json"))
                return output.WritePendingStream("report.json", stream => ReportJson.Serialize(report, stream));
        });
        var pending = new List<PendingFile>();
        Exception? failure = null;
        WrittenReport? written = null;
        try
        {
            written = WriteMarkdownAndHtml(output, report, timeline, plots, charts, rendering, pending);
        }
        catch (Exception ex)
        {
            failure = ex;
        }
        try
        {
            pending.Insert(0, json.GetAwaiter().GetResult());
        }
        catch (Exception ex)
        {
            // report.json's error is the one a sequential run would have met first.
            failure = ex;
        }
        if (failure is not null)
        {
            // No file of this report replaces one of an earlier report unless all were written.
            foreach (var file in pending) file.Discard();
            ExceptionDispatchInfo.Throw(failure);
        }
        foreach (var file in pending) file.Commit();
        // A chart of an earlier report in this directory that this one does not have would contradict report.html.
        foreach (var stale in ReportChartsBuilder.Names.Where(n => !written!.Files.Contains(n + ".png")))
        {
            OutputDirectory.TryDelete(output.File(stale + ".png"));
            OutputDirectory.TryDelete(output.File(stale + ".svg"));
        }
        return written!;
    }

    /// <summary>Starts drawing <paramref name="charts"/> on another thread; null when there is nothing to
    /// draw.</summary>
    public static Task<IReadOnlyList<ChartImage>>? StartCharts(ReportCharts charts) => charts.IsEmpty
        ? null
        : BackgroundWork.Run(_ =>
        {
            // Tracked: a failed report must not end the process while Skia still draws.
            using (StageTimes.Begin("charts")) return ReportChartImages.Render(charts);
        });

    /// <summary>
    /// Writes report.md, the charts and report.html under their temporary names, adding them to
    /// <paramref name="pending"/> in the order they are renamed.
    /// </summary>
    private static WrittenReport WriteMarkdownAndHtml(OutputDirectory output, RunReport report,
        Task<TimelineData?>? timeline,
        IReadOnlyList<EmbeddedPlot>? plots, bool charts, Task<IReadOnlyList<ChartImage>>? rendering,
        List<PendingFile> pending)
    {
        // report.html shows report.md's text: render it once for both.
        string markdown;
        using (StageTimes.Begin("report.md"))
        {
            markdown = ReportMarkdown.Render(report);
            pending.Add(output.WritePendingText("report.md", markdown));
        }
        var files = new List<string>(Names);
        string? missing = null;
        // The charts are waited for where report.html shows them, below the summary and the timeline: on a system
        // report those are most of the page, written while the charts are still drawn (docs/performance.md#html-
        // before-charts). The chart files go to the pending list there, ahead of report.html, the order they are
        // renamed in.
        (IReadOnlyList<EmbeddedChart>?, string?) Charts()
        {
            IReadOnlyList<ChartImage>? images = charts ? [] : null;
            if (rendering is not null)
            {
                try
                {
                    images = rendering.GetAwaiter().GetResult();
                }
                catch (Exception ex) when (ChartLibrary.IsUnavailable(ex))
                {
                    images = null;
                    missing = $"charts not drawn: {ChartLibrary.Reason(ex)}";
                }
            }
            foreach (var image in images ?? [])
            {
                pending.Add(output.Write(image.Name + ".png", tmp => File.WriteAllBytes(tmp, image.Png)));
                pending.Add(output.WritePendingText(image.Name + ".svg", image.Svg));
                files.Add(image.Name + ".png");
                files.Add(image.Name + ".svg");
            }
            var embedded = images?.Select(i => new EmbeddedChart(i.Name, i.Title, i.Png, i.Width, i.Height)).ToList();
            return (embedded, missing ?? (charts ? null : "Charts were not drawn (--no-charts)."));
        }
        var recorded = timeline?.GetAwaiter().GetResult();
        using (StageTimes.Begin("report.html"))
            pending.Add(output.WritePendingStream("report.html",
                stream => HtmlReport.Write(stream, report, markdown, recorded, Charts, plots)));
        return new WrittenReport(files, missing);
    }
}

/// <summary>What <see cref="ReportFiles.Write"/> wrote.</summary>
/// <param name="ChartsMissing">Why the charts could not be drawn (one line for the terminal); null when they were,
/// or were not asked for.</param>
public sealed record WrittenReport(IReadOnlyList<string> Files, string? ChartsMissing);
