using System.Globalization;
using System.Text.Json;

namespace TraceLab.IntegrationTests;

/// <summary>`tracelab sweep --trace` on one small timemutex point: every run is a real traced run.</summary>
public sealed class SweepTracedTests
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");

    private static (int Code, string Out, string Err) Run(params string[] args) =>
        ProcessOutput.Run("dotnet", [Tool, .. args]);

    private static string[] Row(string line) => line.Split(',');

    [TracingFact]
    public void Traced_sweep_keeps_trace_and_report_per_run_and_the_csv_has_the_trace_metrics()
    {
        using var dir = new TempDirectory("sweep-traced");
        var (code, stdout, err) =
            Run("sweep", "timemutex", "--param", "threads", "--values", "2", "--repeat", "1", "--iterations", "2000",
            "--which", "mutex", "--trace", "--out", dir.Path, "--force");
        Assert.True(code == 0, $"exit {code}: {err}\n{stdout}");
        var run = Path.Combine(dir.Path, "runs", "p00-r0");
        foreach (var f in new[] { "trace.dat", "report.json", "report.md", "workload.json" })
            Assert.True(File.Exists(Path.Combine(run, f)), f);
        var lines = File.ReadAllLines(dir.File("sweep.csv"));
        var h = Row(lines[0]).Select((name, i) => (name, i)).ToDictionary(t => t.name, t => t.i);
        var r = Row(lines[1]);
        // Independent: the mean of the worker threads' involuntary switches in the run's own report.json.
        using var report = JsonDocument.Parse(File.ReadAllText(Path.Combine(run, "report.json")));
        var workers = report.RootElement.GetProperty("threads").EnumerateArray()
            .Where(t => t.TryGetProperty("role", out var role)
                && role.GetString()!.StartsWith("worker", StringComparison.Ordinal)).ToList();
        Assert.Equal(2, workers.Count);
        Assert.Equal(workers.Average(t => t.GetProperty("involuntarySwitches").GetDouble()),
            double.Parse(r[h["traced.involPerThread"]], CultureInfo.InvariantCulture), 9);
        Assert.Equal(workers.Average(t => t.GetProperty("voluntarySwitches").GetDouble()),
            double.Parse(r[h["traced.volPerThread"]], CultureInfo.InvariantCulture), 9);
        Assert.True(h.ContainsKey("traced.syscallsPerIteration"));
    }

}
