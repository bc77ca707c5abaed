using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;

namespace TraceLab.IntegrationTests;

/// <summary>
/// `trace --live` on tracefs: the preview decoded from the pages as they are copied agrees with the report.
/// </summary>
public sealed partial class LiveViewCaptureTests
{
    [GeneratedRegex(@"(\d+): ([\d,]+) sw/s")]
    private static partial Regex ThreadRate();

    [TracingFact]
    public void Live_lines_show_every_worker_switching_and_add_up_to_most_of_the_reported_switches()
    {
        using var output = new TempDirectory("tracelab-live");
        var run = TraceLabProcess.Run(TimeSpan.FromSeconds(180), "trace", "timemutex", "mutex", "--iterations",
            "100000", "--live", "--out", output.Path, "--force");
        Assert.True(run.ExitCode == 0, run.Stderr);

        var lines = run.Stdout.Split('\n').Where(l => l.StartsWith("live ", StringComparison.Ordinal)).ToList();
        Assert.True(lines.Count >= 1, "no live line printed:\n" + run.Stdout);
        // Each line covers 1 s, so a rate is that second's count.
        var live = new Dictionary<int, long>();
        foreach (Match m in lines.SelectMany(l => ThreadRate().Matches(l)))
        {
            var tid = int.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture);
            live[tid] = live.GetValueOrDefault(tid)
                + long.Parse(m.Groups[2].Value, NumberStyles.AllowThousands, CultureInfo.InvariantCulture);
        }

        using var report = JsonDocument.Parse(File.ReadAllText(Path.Combine(output.Path, "report.json")));
        var workers = report.RootElement.GetProperty("threads").EnumerateArray()
            .Where(t => t.TryGetProperty("role", out var r)
                && r.GetString()!.StartsWith("worker", StringComparison.Ordinal)).ToList();
        Assert.NotEmpty(workers);
        foreach (var w in workers)
        {
            var tid = w.GetProperty("tid").GetInt32();
            var reported =
                w.GetProperty("voluntarySwitches").GetInt64() + w.GetProperty("involuntarySwitches").GetInt64();
            Assert.True(live.TryGetValue(tid, out var seen), $"worker {tid} never in the live view");
            // Live counts whole seconds of the whole run (not clipped to the region, the last partial second
            // not shown); the report counts the region. Most of the switches must be in both.
            Assert.InRange(seen, reported / 2, reported * 3 / 2);
        }
    }
}
