using System.Text.Json.Nodes;

namespace TraceLab.Tests.Cli;

/// <summary>
/// `tracelab analyze` of a truncated sample trace: one-line error by default, a warned partial report with --salvage.
/// </summary>
public sealed class SalvageTests : IDisposable
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-cs");
    private readonly TempDirectory _dir = new("tracelab-salvage");
    private readonly string _trace;

    public SalvageTests()
    {
        // Two thirds of the file: CPU 0's data is whole, CPU 1's ends mid-page.
        var bytes = File.ReadAllBytes(Path.Combine(Sample, "trace.dat"));
        _trace = _dir.File("trace.dat");
        File.WriteAllBytes(_trace, bytes[..(bytes.Length * 2 / 3)]);
    }

    public void Dispose() => _dir.Dispose();

    private static (int Code, string Out, string Err) Run(params string[] args) =>
        ProcessOutput.Run("dotnet", [Tool, .. args]);

    [Fact]
    public void Without_salvage_a_truncated_trace_is_one_line_naming_the_file_and_exit_1()
    {
        var (code, _, err) = Run("analyze", _trace, "--out", _dir.File("out"));
        Assert.Equal(1, code);
        var line = Assert.Single(err.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.StartsWith($"tracelab: {_trace}: at offset ", line, StringComparison.Ordinal);
        Assert.False(File.Exists(_dir.File(Path.Combine("out", "report.json"))));
    }

    [Fact]
    public void With_salvage_the_intact_part_is_reported_with_a_warning_saying_what_was_skipped()
    {
        var (code, stdout, err) = Run("analyze", _trace, "--out", _dir.File("out"), "--salvage");
        Assert.True(code == 0, $"exit {code}: {err}");
        Assert.Equal("", err);

        var report = JsonNode.Parse(File.ReadAllText(_dir.File(Path.Combine("out", "report.json"))))!;
        var full = JsonNode.Parse(File.ReadAllText(Path.Combine(Sample, "report.json")))!;
        var events = report["capture"]!["events"]!.GetValue<long>();
        Assert.InRange(events, 1, full["capture"]!["events"]!.GetValue<long>() - 1);

        var warning = report["warnings"]!.AsArray().Select(w => w!.GetValue<string>())
            .Single(w => w.StartsWith("salvaged", StringComparison.Ordinal));
        Assert.Matches(@"CPU 1: [\d,]+ bytes \([\d,]+ pages\) skipped from offset \d+ "
            + @"\(expected CPU 1 data up to offset 1441792, but the file ends at offset 961194\)", warning);
        Assert.DoesNotContain("CPU 0:", warning, StringComparison.Ordinal);
        Assert.Contains("warning:", stdout, StringComparison.Ordinal);
        Assert.Contains("salvaged a damaged trace", stdout, StringComparison.Ordinal);
    }

    [Fact]
    public void Salvage_of_an_intact_trace_adds_no_warning()
    {
        var intact = _dir.File("intact.dat");
        File.Copy(Path.Combine(Sample, "trace.dat"), intact);
        var (code, _, err) = Run("analyze", intact, "--out", _dir.File("intact-out"), "--salvage");
        Assert.True(code == 0, $"exit {code}: {err}");
        var report = JsonNode.Parse(File.ReadAllText(_dir.File(Path.Combine("intact-out", "report.json"))))!;
        Assert.DoesNotContain(
            report["warnings"]!.AsArray(), w => w!.GetValue<string>().StartsWith("salvaged", StringComparison.Ordinal));
    }
}
