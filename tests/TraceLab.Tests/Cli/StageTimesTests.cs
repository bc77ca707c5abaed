using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Pipeline;

namespace TraceLab.Tests.Cli;

/// <summary>
/// TRACELAB_STAGES=1 (docs/performance.md#stages): `analyze` prints each stage's wall time, and the process CPU time
/// and garbage collections at its end, on stderr, one line per stage, and changes nothing else; without it stderr
/// stays empty.
/// </summary>
public sealed partial class StageTimesTests
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");

    [GeneratedRegex(@"^stage (?<name>.{14}) +(?<wall>\d+\.\d) ms wall; at its end +(?<since>\d+\.\d) ms since start, " +
        @"+(?<cpu>\d+\.\d) ms CPU; so far (?<mb>\d+\.\d) MB allocated, " +
        @"(?<gen0>\d+)/(?<gen1>\d+)/(?<gen2>\d+) garbage collections \(gen 0/1/2\), paused (?<paused>\d+\.\d) ms" +
        @"(; gen-0 budget (?<budget>\d+(\.\d)?) MiB)?$")]
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
        // Between the first two stages, whether the run's heap goes uncollected (docs/performance.md#no-gc-region).
        // Then its pages, and what decided them: this machine's new memory, timed
        // (docs/performance.md#huge-pages-measured).
        var lines = err.Split('\n', StringSplitOptions.RemoveEmptyEntries).ToList();
        Assert.Equal(HeapLine, lines[1]);
        Assert.Matches(MeasuredPagesLine(), lines[2]);
        lines.RemoveRange(1, 2);
        var stages = lines.Select(l => StageLine().Match(l)).ToList();
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
        // A gen-0 budget given to the runtime is said once, on the first line (NativeAotBuildTests: the installed
        // tool's own).
        Assert.All(stages.Skip(1), m => Assert.False(m.Groups["budget"].Success, m.Value));
        (code, _, var asked) = ProcessOutput.Run("env",
            ["TRACELAB_STAGES=1", "TRACELAB_HUGE_PAGES=1", "dotnet", .. analyze, "--no-charts"]);
        Assert.True(code == 0, asked);
        Assert.Matches(HugePagesLine(), asked.Split('\n')[2]);
        Assert.EndsWith(" (TRACELAB_HUGE_PAGES=1)", asked.Split('\n')[2], StringComparison.Ordinal);
        (code, _, var declined) = ProcessOutput.Run("env",
            ["TRACELAB_STAGES=1", "TRACELAB_HUGE_PAGES=0", "dotnet", .. analyze, "--no-charts"]);
        Assert.True(code == 0, declined);
        Assert.Equal("heap: 4 KiB pages (TRACELAB_HUGE_PAGES=0)", declined.Split('\n')[2]);
        (code, _, var budget) = ProcessOutput.Run("env",
            ["TRACELAB_STAGES=1", "DOTNET_GCgen0size=3000000", "dotnet", .. analyze, "--no-charts"]);
        Assert.True(code == 0, budget);
        Assert.EndsWith("; gen-0 budget 48 MiB", budget.Split('\n')[0], StringComparison.Ordinal);
        double Cpu(string stage) => double.Parse(stages[names.IndexOf(stage)].Groups["cpu"].Value,
            CultureInfo.InvariantCulture);
        Assert.True(Cpu("exit") >= Cpu("pass") && Cpu("pass") > 0, err);
        // The collections are counted since the start: never fewer at a later line (lines print in the order stages
        // end), and a collection of gen 1 or 2 is one of gen 0 too.
        long Of(Match m, string group) => long.Parse(m.Groups[group].Value, CultureInfo.InvariantCulture);
        foreach (var (earlier, later) in stages.Zip(stages.Skip(1)))
            Assert.All(["gen0", "gen1", "gen2"], g => Assert.True(Of(later, g) >= Of(earlier, g), err));
        Assert.All(stages, m => Assert.True(Of(m, "gen0") >= Of(m, "gen1") && Of(m, "gen1") >= Of(m, "gen2"), err));
        // No collection after the one that starts the region: the sample's analysis allocates far less than it holds.
        Assert.All(stages.Skip(1), m => Assert.Equal("1/1/1",
            $"{m.Groups["gen0"].Value}/{m.Groups["gen1"].Value}/{m.Groups["gen2"].Value}"));
    }

    private const string HeapLine = "heap: no garbage collection for the first 96 MiB allocated";

    [GeneratedRegex(@"^heap: (transparent huge pages advised for \d+ MiB of the collector's address range, " +
        @"\d+ MiB of it writable ahead of the collector \(.+\)|" +
        @"no huge pages advised \(not Linux, the system gives none or gives them always, or refused; .+\))$")]
    private static partial Regex HugePagesLine();

    /// <summary>The pages as this machine's measurement chose them (either kind), or why it was not made.</summary>
    [GeneratedRegex(@"^heap: (4 KiB pages|transparent huge pages advised for \d+ MiB of the collector's address " +
        @"range, \d+ MiB of it writable ahead of the collector) \((new memory here: \d+\.\d µs a 4 KiB page, " +
        @"(\d+\.\d µs per 4 KiB of a huge page|cheap enough that huge pages were not timed)|" +
        @"not timed: the system gives no huge pages on request, or refused the memory)\)$")]
    private static partial Regex MeasuredPagesLine();

    [Fact]
    public void Only_analyze_runs_without_garbage_collection()
    {
        // bench runs many analyses in one process and counts their collections: its heap is collected as usual.
        var (code, _, err) = ProcessOutput.Run("env",
            ["TRACELAB_STAGES=1", "dotnet", Tool, "bench", Sample, "--repeat", "1"]);
        Assert.True(code == 0, err);
        Assert.DoesNotContain("heap: no garbage collection", err, StringComparison.Ordinal);
        // Its heap's pages are measured and said as analyze's are.
        Assert.Matches(MeasuredPagesLine(), err.Split('\n')[1]);
        Assert.Equal(96L << 20, TraceLab.Cli.AnalysisHeap.Bytes);
    }
}
