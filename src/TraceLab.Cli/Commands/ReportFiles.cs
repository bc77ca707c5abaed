using TraceLab.Reporting;

namespace TraceLab.Cli.Commands;

/// <summary>Writes report.json and report.md into a run's output directory.</summary>
public static class ReportFiles
{
    public static void Write(OutputDirectory output, RunReport report)
    {
        output.WriteText("report.json", ReportJson.Serialize(report));
        output.WriteText("report.md", ReportMarkdown.Render(report));
    }
}
