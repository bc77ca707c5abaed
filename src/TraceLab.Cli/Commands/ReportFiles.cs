using TraceLab.Analyzers.Timeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Html;

namespace TraceLab.Cli.Commands;

/// <summary>Writes report.json, report.md and report.html into a run's output directory.</summary>
public static class ReportFiles
{
    public static readonly string[] Names = ["report.md", "report.json", "report.html"];

    /// <param name="timeline">The thread timeline for report.html (null: the page says none was recorded).</param>
    /// <param name="plots">SVG plots to embed in report.html (e.g. a sweep's).</param>
    public static void Write(OutputDirectory output, RunReport report, TimelineData? timeline = null, IReadOnlyList<EmbeddedPlot>? plots = null)
    {
        output.WriteStream("report.json", stream => ReportJson.Serialize(report, stream));
        // report.html shows report.md's text: render it once for both.
        var markdown = ReportMarkdown.Render(report);
        output.WriteText("report.md", markdown);
        output.WriteText("report.html", HtmlReport.Render(report, markdown, timeline, plots));
    }
}
