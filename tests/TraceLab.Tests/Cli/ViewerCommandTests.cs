using Perfetto.Protos;

namespace TraceLab.Tests.Cli;

/// <summary>The real `tracelab` program: `export` and the report.html of `analyze`, good and bad input.</summary>
public sealed class ViewerCommandTests
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");
    private static readonly string SampleTrace = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");

    private static (int Code, string Out, string Err) Run(params string[] args) =>
        ProcessOutput.Run("dotnet", [Tool, .. args]);

    private static void AssertOneLineError(string err, string expected)
    {
        var lines = err.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.StartsWith("tracelab: ", lines[0]);
        Assert.Contains(expected, lines[0]);
    }

    [Fact]
    public void Export_writes_a_decodable_perfetto_trace()
    {
        using var dir = new TempDirectory("tracelab-export");
        var file = dir.File("sample.pftrace");
        var (code, output, err) = Run("export", SampleTrace, "--to", "perfetto", "-o", file);
        Assert.True(code == 0, err);
        Assert.Contains("sched_switch", output);
        var trace = Trace.Parser.ParseFrom(File.ReadAllBytes(file));
        Assert.Contains(trace.Packet, p => p.FtraceEvents is not null);
        Assert.Contains(trace.Packet, p => p.TrackEvent is not null);
        Assert.Empty(Directory.GetFiles(dir.Path, ".*.tmp"));
    }

    [Fact]
    public void Export_refuses_to_overwrite_without_force_and_leaves_the_file_alone()
    {
        using var dir = new TempDirectory("tracelab-export");
        var file = dir.File("existing.pftrace");
        File.WriteAllText(file, "keep me");
        var (code, _, err) = Run("export", SampleTrace, "--to", "perfetto", "-o", file);
        Assert.Equal(2, code);
        AssertOneLineError(err, "already exists: add --force");
        Assert.Equal("keep me", File.ReadAllText(file));
        Assert.Equal(0, Run("export", SampleTrace, "--to", "perfetto", "-o", file, "--force").Code);
        Assert.NotEqual("keep me", File.ReadAllText(file));
    }

    [Theory]
    [InlineData("chrome", "valid formats are perfetto")]
    public void Export_to_an_unknown_format_is_a_usage_error(string format, string expected)
    {
        var (code, _, err) = Run(
            "export", SampleTrace, "--to", format, "-o", Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid()));
        Assert.Equal(2, code);
        AssertOneLineError(err, expected);
    }

    [Fact]
    public void Export_of_a_missing_trace_is_a_usage_error()
    {
        var (code, _, err) = Run("export", "/nonexistent/trace.dat", "--to", "perfetto");
        Assert.Equal(2, code);
        AssertOneLineError(err, "no such file");
    }

    [Theory]
    [InlineData("10", "START:LENGTH")]
    [InlineData("5:0", "must be more than 0")]
    public void Bad_timeline_window_is_a_usage_error(string window, string expected)
    {
        using var dir = new TempDirectory("tracelab-analyze");
        var (code, _, err) = Run("analyze", SampleTrace, "--out", dir.Path, "--timeline-window", window);
        Assert.Equal(2, code);
        AssertOneLineError(err, expected);
        Assert.Empty(Directory.GetFiles(dir.Path));
    }

    [Fact]
    public void Analyze_writes_report_html_with_the_chosen_window()
    {
        using var dir = new TempDirectory("tracelab-analyze");
        var (code, output, err) = Run("analyze", SampleTrace, "--out", dir.Path, "--timeline-window", "20:0.5");
        Assert.True(code == 0, err);
        Assert.Contains("report.html", output);
        var html = File.ReadAllText(dir.File("report.html"));
        Assert.Contains("Window <b>20.000–20.500 ms</b>", html);
        Assert.Contains("<g class=\"tl-row\"", html);
    }
}
