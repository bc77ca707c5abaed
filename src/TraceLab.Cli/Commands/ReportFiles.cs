using TraceLab.Analyzers.Timeline;
using TraceLab.Charts;
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

    /// <param name="timeline">The thread timeline for report.html (null: the page says none was recorded).</param>
    /// <param name="plots">SVG plots to embed in report.html (e.g. a sweep's).</param>
    /// <param name="charts">Draw the charts (false: --no-charts, and sweep runs, which keep only report.json's
    /// figures).</param>
    /// <returns>The files written, report files first; and why the charts are missing when they could not be
    /// drawn.</returns>
    public static WrittenReport Write(OutputDirectory output, RunReport report, TimelineData? timeline = null,
        IReadOnlyList<EmbeddedPlot>? plots = null, bool charts = true)
    {
        // Charts render on another thread while the text reports are written: the drawing library (and its native
        // half) loads only here, and its start-up overlaps the JSON and Markdown work.
        var rendering = charts && !report.Charts.IsEmpty
            ? Task.Run(() => ReportChartImages.Render(report.Charts)) : null;
        output.WriteStream("report.json", stream => ReportJson.Serialize(report, stream));
        // report.html shows report.md's text: render it once for both.
        var markdown = ReportMarkdown.Render(report);
        output.WriteText("report.md", markdown);
        var files = new List<string>(Names);
        IReadOnlyList<ChartImage>? images = charts ? [] : null;
        string? missing = null;
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
            output.Commit(image.Name + ".png", tmp => File.WriteAllBytes(tmp, image.Png));
            output.WriteText(image.Name + ".svg", image.Svg);
            files.Add(image.Name + ".png");
            files.Add(image.Name + ".svg");
        }
        // A chart of an earlier report in this directory that this one does not have would contradict report.html.
        foreach (var stale in ReportChartsBuilder.Names.Except(images?.Select(i => i.Name) ?? []))
        {
            OutputDirectory.TryDelete(output.File(stale + ".png"));
            OutputDirectory.TryDelete(output.File(stale + ".svg"));
        }
        var embedded = images?.Select(i => new EmbeddedChart(i.Name, i.Title, i.Png, i.Width, i.Height)).ToList();
        output.WriteStream("report.html", stream => HtmlReport.Write(stream, report, markdown, timeline, plots,
            embedded, missing ?? (charts ? null : "Charts were not drawn (--no-charts).")));
        return new WrittenReport(files, missing);
    }
}

/// <summary>What <see cref="ReportFiles.Write"/> wrote.</summary>
/// <param name="ChartsMissing">Why the charts could not be drawn (one line for the terminal); null when they were,
/// or were not asked for.</param>
public sealed record WrittenReport(IReadOnlyList<string> Files, string? ChartsMissing);
