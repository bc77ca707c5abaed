using System.Globalization;
using System.Text.Json;
using System.Text.Json.Nodes;
using TraceLab.Tests.Workloads;

namespace TraceLab.Tests.Cli;

/// <summary>
/// The real `tracelab sweep` on small timemutex sweeps: files, numbers against the runs' own results, resume, bad
/// input.
/// </summary>
public sealed class SweepCliTests
{
    private static readonly string[] DecidedOutcomes = ["reproduced", "not reproduced", "inverted"];
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");

    private static (int Code, string Out, string Err) Run(params string[] args) =>
        ProcessOutput.Run("dotnet", [Tool, .. args]);

    private static string[] Row(string line) => line.Split(',');

    [NativeToolsFact]
    public void Small_sweep_writes_every_file_and_the_csv_matches_each_runs_workload_json()
    {
        using var dir = new TempDirectory("sweep-cli");
        var (code, stdout, err) = Run("sweep", "timemutex", "--param", "threads", "--values", "1,2", "--series",
            "which", "--series-values", "cs,mutex",
            "--repeat", "3", "--iterations", "2000", "--out", dir.Path, "--force");
        Assert.True(code == 0, $"exit {code}: {err}\n{stdout}");
        foreach (var f in new[] { "sweep.csv", "sweep.json", "report.md", "state.json", "custom-elapsed.svg",
            "custom-user.svg", "custom-system.svg" })
            Assert.True(File.Exists(dir.File(f)), f);

        var lines = File.ReadAllLines(dir.File("sweep.csv"));
        Assert.Equal(1 + 12, lines.Length);
        var h = Row(lines[0]).Select((name, i) => (name, i)).ToDictionary(t => t.name, t => t.i);
        foreach (var line in lines.Skip(1))
        {
            var r = Row(line);
            Assert.Equal("ok", r[h["status"]]);
            using var result =
                JsonDocument.Parse(File.ReadAllText(Path.Combine(dir.Path, r[h["directory"]], "workload.json")));
            var root = result.RootElement;
            Assert.Equal(
                root.GetProperty("elapsedNs").GetInt64().ToString(CultureInfo.InvariantCulture), r[h["elapsed_ns"]]);
            Assert.Equal(root.GetProperty("process").GetProperty("systemNs").GetInt64()
                .ToString(CultureInfo.InvariantCulture), r[h["system_ns"]]);
            // The point's parameters reached the workload: its own params echo them.
            Assert.Equal(r[h["threads"]],
                root.GetProperty("params").GetProperty("threads").GetInt32().ToString(CultureInfo.InvariantCulture));
            Assert.Equal(r[h["series"]] == "cs" ? 1 : 3, root.GetProperty("params").GetProperty("which").GetInt32());
            // Total iterations = threads × 2000, counted by the workload's threads.
            Assert.Equal(int.Parse(r[h["threads"]], CultureInfo.InvariantCulture) * 2000,
                double.Parse(r[h["metric.iterations"]], CultureInfo.InvariantCulture));
        }

        using var json = JsonDocument.Parse(File.ReadAllText(dir.File("sweep.json")));
        var points = json.RootElement.GetProperty("points");
        Assert.Equal(4, points.GetArrayLength());
        Assert.All(points.EnumerateArray(),
            p => Assert.Equal(3, p.GetProperty("stats").GetProperty("elapsed").GetProperty("n").GetInt32()));
        Assert.Contains("custom-elapsed.svg", File.ReadAllText(dir.File("report.md")));
    }

    [NativeToolsFact]
    public void Predefined_sweep_ends_with_a_verdict_per_claim_aspect()
    {
        using var dir = new TempDirectory("sweep-tm1");
        var (code, stdout, err) =
            Run("sweep", "timemutex", "tm1", "--repeat", "3", "--iterations", "2000", "--out", dir.Path, "--force");
        Assert.True(code == 0, $"exit {code}: {err}\n{stdout}");
        using var json = JsonDocument.Parse(File.ReadAllText(dir.File("sweep.json")));
        var verdicts = json.RootElement.GetProperty("verdicts").EnumerateArray().ToList();
        Assert.Equal(2, verdicts.Count);
        Assert.All(verdicts, v =>
        {
            Assert.Equal("TM1", v.GetProperty("claim").GetString());
            Assert.Contains(v.GetProperty("outcome").GetString(), DecidedOutcomes);
            Assert.NotEmpty(v.GetProperty("criterion").GetString()!);
        });
        Assert.Contains("## Claim verdicts", File.ReadAllText(dir.File("report.md")));
        Assert.Equal(24, File.ReadAllLines(dir.File("sweep.csv")).Length - 1);
    }

    [NativeToolsFact]
    public void Resume_runs_only_the_runs_missing_from_the_state()
    {
        using var dir = new TempDirectory("sweep-resume-cli");
        var (code, _, err) = Run("sweep", "timemutex", "--param", "threads", "--values", "1,2", "--repeat", "3",
            "--iterations", "2000", "--out", dir.Path, "--force");
        Assert.True(code == 0, err);
        // Forget two runs, as if the sweep had been killed before them.
        var state = JsonNode.Parse(File.ReadAllText(dir.File("state.json")))!;
        var runs = state["runs"]!.AsArray();
        var forgotten =
            new[] { runs[^1]!["directory"]!.GetValue<string>(), runs[^2]!["directory"]!.GetValue<string>() };
        runs.RemoveAt(runs.Count - 1);
        runs.RemoveAt(runs.Count - 1);
        state["complete"] = false;
        File.WriteAllText(dir.File("state.json"), state.ToJsonString());
        var kept = runs.Select(r => Path.Combine(dir.Path, r!["directory"]!.GetValue<string>(), "workload.json"))
            .ToDictionary(f => f, File.GetLastWriteTimeUtc);

        var (code2, stdout2, err2) = Run("sweep", "--resume", dir.Path);
        Assert.True(code2 == 0, err2);
        Assert.Contains("4 already done", stdout2);
        Assert.All(kept, kv => Assert.Equal(kv.Value, File.GetLastWriteTimeUtc(kv.Key)));
        Assert.All(forgotten, d => Assert.True(File.Exists(Path.Combine(dir.Path, d, "workload.json"))));
        Assert.Equal(6, File.ReadAllLines(dir.File("sweep.csv")).Length - 1);
    }

    private static void AssertOneLineError(int code, string err, string expected)
    {
        Assert.Equal(2, code);
        var lines = err.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.StartsWith("tracelab: ", lines[0]);
        Assert.Contains(expected, lines[0]);
    }

    [Theory]
    [InlineData("unknown sweep 'nosuch' for timemutex: valid sweeps are tm1", "sweep", "timemutex", "nosuch")]
    [InlineData("unknown workload 'nosuch'", "sweep", "nosuch", "tm1")]
    [InlineData("--threads 0: must be between 1 and 64", "sweep", "timemutex", "--param", "threads", "--values", "0,1")]
    [InlineData("--repeat must be at least 1", "sweep", "timemutex", "tm1", "--repeat", "0")]
    [InlineData("either a sweep name or --param", "sweep", "timemutex", "tm1", "--param", "threads", "--values", "1")]
    [InlineData("--threads is what this sweep varies", "sweep", "timemutex", "tm4", "--threads", "3")]
    [InlineData("timemutex has no parameter 'bogus'", "sweep", "timemutex", "--param", "bogus", "--values", "1")]
    [InlineData("--values repeats a value", "sweep", "timemutex", "--param", "threads", "--values", "1,1")]
    [InlineData("needs a sweep name", "sweep", "timemutex")]
    public void Bad_sweep_input_is_one_line_and_exit_2(string expected, params string[] args)
    {
        var (code, _, err) = Run([.. args, "--out", Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid())]);
        AssertOneLineError(code, err, expected);
    }

    [Fact]
    public void Resume_of_a_directory_without_state_is_refused()
    {
        using var dir = new TempDirectory("sweep-nostate");
        var (code, _, err) = Run("sweep", "--resume", dir.Path);
        AssertOneLineError(code, err, "has no state.json");
    }

    [Fact]
    public void Sweeps_lists_every_predefined_sweep_with_its_claims()
    {
        var (code, stdout, _) = Run("sweeps");
        Assert.Equal(0, code);
        foreach (var name in new[] { "tm1", "tm2", "tm4", "tm5", "tm6", "tm7", "tm8", "tm9", "tm10", "th1", "sr", "tp1",
            "tp2", "tp3" })
            Assert.Contains($" {name} ", stdout);
        Assert.Contains("TM2,TM3", stdout);
        Assert.Contains("SR1,SR2,SR3,SR4", stdout);
    }
}
