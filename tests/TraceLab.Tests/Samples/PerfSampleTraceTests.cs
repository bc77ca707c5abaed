using System.Text.Json.Nodes;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Tests.Samples;

/// <summary>
/// The checked-in perf.data sample (a real `perf record -a` of the kernel-mutex workload) re-analyzed now gives
/// exactly the stored report; and the CLI reports damage to a perf.data in one line.
/// </summary>
public sealed class PerfSampleTraceTests
{
    private static string Dir => Path.Combine(RepoPaths.SampleTraces, "perf-timemutex-mutex");

    [Fact]
    public void Reanalysis_of_the_perf_data_sample_reproduces_the_stored_report()
    {
        var stored = ReportJson.Deserialize(File.ReadAllText(Path.Combine(Dir, "report.json")));
        var workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(Dir, "workload.json")), "workload.json");

        var now = TraceAnalysis.Analyze(
            Path.Combine(Dir, "capture.perf.data"), workload, pid: null);

        Assert.Equal("perf", now.Capture.Backend);
        Assert.Equal(4, now.Threads.Count(t => t.Workload is not null));
        Assert.Equal(Comparable(stored), Comparable(now));
    }

    [Fact]
    public void A_truncated_perf_data_is_one_line_and_exit_1_even_when_salvaging()
    {
        using var tmp = new TempDirectory("tracelab-perfcut");
        var bytes = File.ReadAllBytes(Path.Combine(Dir, "capture.perf.data"));
        var cut = tmp.File("cut.perf.data");
        File.WriteAllBytes(cut, bytes[..(bytes.Length * 2 / 3)]);
        var tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");

        foreach (var salvage in new[] { false, true })
        {
            string[] args = salvage ? ["analyze", cut, "--out", tmp.File("out"), "--salvage"]
                : ["analyze", cut, "--out", tmp.File("out")];
            var (code, _, err) = ProcessOutput.Run("dotnet", [tool, .. args]);
            Assert.Equal(1, code);
            var line = Assert.Single(err.Split('\n', StringSplitOptions.RemoveEmptyEntries));
            Assert.StartsWith($"tracelab: {cut}: at offset ", line, StringComparison.Ordinal);
            Assert.Contains("truncated", line, StringComparison.Ordinal);
        }
    }

    private static string Comparable(RunReport r)
    {
        var node = JsonNode.Parse(ReportJson.Serialize(r))!.AsObject();
        node.Remove("run");
        node["capture"]!.AsObject()["traceFile"] = Path.GetFileName(r.Capture.TraceFile);
        return node.ToJsonString(ReportJson.Options);
    }
}
