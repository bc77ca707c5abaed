namespace TraceLab.Tests.Charts;

/// <summary>`tracelab analyze` writes the charts beside the report, lists them, and --no-charts removes them.</summary>
public sealed class ChartFilesTests
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");
    private static readonly string[] Charts =
        ["chart-handoff-gaps", "chart-ready-latency", "chart-thread-states", "chart-wakers"];

    private static string[] ChartFiles(string dir) => Directory.GetFiles(dir, "chart-*").Select(Path.GetFileName)
        .OfType<string>().Order(StringComparer.Ordinal).ToArray();

    [ChartsFact]
    public void Analyze_writes_each_chart_as_png_and_svg_and_no_charts_leaves_none_behind()
    {
        using var dir = new TempDirectory("tracelab-charts");
        var (code, stdout, err) = ProcessOutput.Run("dotnet", [Tool, "analyze", Sample, "--out", dir.Path]);
        Assert.True(code == 0, err);
        var expected = Charts.SelectMany(c => new[] { c + ".png", c + ".svg" }).ToArray();
        Assert.Equal(expected, ChartFiles(dir.Path));
        Assert.All(expected, f => Assert.Contains(f, stdout));
        Assert.Contains("id=\"chart-wakers\"", File.ReadAllText(Path.Combine(dir.Path, "report.html")));

        (code, _, err) =
            ProcessOutput.Run("dotnet", [Tool, "analyze", Sample, "--out", dir.Path, "--force", "--no-charts"]);
        Assert.True(code == 0, err);
        // The earlier charts would contradict the new report.html, which says none were drawn.
        Assert.Empty(ChartFiles(dir.Path));
        var html = File.ReadAllText(Path.Combine(dir.Path, "report.html"));
        Assert.Contains("Charts were not drawn (--no-charts).", html);
        Assert.DoesNotContain("<figure class=\"card chart\"", html);
    }
}
