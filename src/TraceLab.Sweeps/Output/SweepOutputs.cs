using System.Text;
using System.Text.Json;
using TraceLab.Sweeps.Plots;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Sweeps.Output;

/// <summary>
/// Writes a sweep's result files (sweep.csv, sweep.json, *.svg, report.md), each via a temporary file and a rename.
/// </summary>
public static class SweepOutputs
{
    public static SweepSummary Write(string directory, SweepData data, SweepState state, MachineInfo machine)
    {
        var plots = new List<string>();
        foreach (var (file, _, svg) in SweepPlots.Render(data))
        {
            WriteText(directory, file, svg);
            plots.Add(file);
        }
        var summary = SweepSummary.Build(data, state, machine, plots);
        WriteText(directory, "sweep.csv", SweepCsv.Write(data));
        WriteText(directory, "sweep.json", JsonSerializer.Serialize(summary, SweepJsonContext.Default.SweepSummary));
        WriteText(directory, "report.md", SweepReportMarkdown.Write(summary, TableMetrics(data.Definition)));
        return summary;
    }

    /// <summary>
    /// The report table's columns: the built-in times and switches, then what the plots and verdicts use.
    /// </summary>
    public static IReadOnlyList<string> TableMetrics(SweepDefinition d) =>
        SweepMetrics.BuiltIn
            .Concat(d.PlotMetrics)
            .Concat(d.Verdicts.OfType<VerdictRule>().Select(v => v.Metric))
            .Concat(d.Verdicts.OfType<VerdictRule>().SelectMany(v => v.Cite).Select(c => "traced." + c))
            .Distinct().ToList();

    private static void WriteText(string directory, string name, string content)
    {
        var final = Path.Combine(directory, name);
        var tmp = Path.Combine(directory, $".{name}.tmp");
        using (var fs = new FileStream(tmp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            fs.Write(Encoding.UTF8.GetBytes(content));
            fs.Flush(flushToDisk: true);
        }
        File.Move(tmp, final, overwrite: true);
    }
}
