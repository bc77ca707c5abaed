using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Pipeline;

namespace TraceLab.Tests.Cli;

/// <summary>
/// TRACELAB_STAGES=1 (docs/performance.md#stages): `analyze` prints each stage's wall time and the process CPU time
/// at its end on stderr, one line per stage, and changes nothing else; without it stderr stays empty.
/// </summary>
public sealed partial class StageTimesTests
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");

    [GeneratedRegex(@"^stage (?<name>.{14}) +(?<wall>\d+\.\d) ms wall; at its end +(?<since>\d+\.\d) ms since start, " +
        @"+(?<cpu>\d+\.\d) ms CPU$")]
    private static partial Regex StageLine();

    [Fact]
    public void Every_stage_of_analyze_is_one_line_on_stderr_and_the_output_is_unchanged()
    {
        using var dir = new TempDirectory("tracelab-stages");
        string[] analyze = [Tool, "analyze", Sample, "--out", dir.Path, "--force"];

        var (code, plainOut, plainErr) = ProcessOutput.Run("env", ["-u", "TRACELAB_STAGES", "dotnet", .. analyze]);
        Assert.True(code == 0, plainErr);
        Assert.Equal("", plainErr);
        (code, var timedOut, var err) = ProcessOutput.Run("env", ["TRACELAB_STAGES=1", "dotnet", .. analyze]);
        Assert.True(code == 0, err);

        Assert.Equal(plainOut, timedOut);
        var stages = err.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(l => StageLine().Match(l)).ToList();
        Assert.All(stages, m => Assert.True(m.Success, m.Value));
        var names = stages.Select(m => m.Groups["name"].Value.TrimEnd()).ToList();
        // In order up to the pass. The charts are drawn from when their data is built, while the report model is, so
        // they may end before it; the files and the terminal start after the model and end in any order; exit last.
        Assert.Equal(["start to Main", "command line", "open", "pass"], names[..4]);
        Assert.Equal(["charts", "report model", "report.html", "report.json", "report.md", "terminal"],
            names[4..^1].Order());
        Assert.All(["report.html", "report.json", "report.md", "terminal"],
            stage => Assert.True(names.IndexOf(stage) > names.IndexOf("report model"), err));
        Assert.Equal("exit", names[^1]);
        double Cpu(string stage) => double.Parse(stages[names.IndexOf(stage)].Groups["cpu"].Value,
            CultureInfo.InvariantCulture);
        Assert.True(Cpu("exit") >= Cpu("pass") && Cpu("pass") > 0, err);
    }
}
