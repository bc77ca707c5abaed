using System.Text.Json;
using System.Text.Json.Nodes;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Cli;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Tests.Samples;

/// <summary>
/// The checked-in sample traces (real captures) re-analyzed now must give exactly the report stored beside them
/// when they were captured — a snapshot of the whole pipeline: trace.dat reader, accounting, report model.
/// </summary>
public sealed class SampleTraceTests
{
    public static TheoryData<string> Samples => new() { "timemutex-cs", "timemutex-mutex" };

    [Theory]
    [MemberData(nameof(Samples))]
    public void Reanalysis_reproduces_the_stored_report(string sample)
    {
        var dir = Path.Combine(RepoPaths.SampleTraces, sample);
        var stored = ReportJson.Deserialize(File.ReadAllText(Path.Combine(dir, "report.json")));
        var workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(dir, "workload.json")), "workload.json");

        var now =
            AnalysisPipeline.Analyze(Path.Combine(dir, "trace.dat"), workload, run: null, partial: false, pid: null);

        Assert.Equal(Comparable(stored), Comparable(now));
    }

    /// <summary>
    /// The analyzers shared out over analysis threads (each repeating the accounting) give the one-thread report,
    /// whatever the number of threads; the timeline (report.html) too.
    /// </summary>
    [Theory]
    [InlineData("timemutex-mutex", 1)]
    [InlineData("timemutex-mutex", 2)]
    [InlineData("timemutex-mutex", 6)]
    [InlineData("timemutex-cs", 3)]
    public void Analysis_threads_give_the_one_thread_report(string sample, int threads)
    {
        var dir = Path.Combine(RepoPaths.SampleTraces, sample);
        var workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(dir, "workload.json")), "workload.json");
        var trace = Path.Combine(dir, "trace.dat");
        var window = TimelineWindow.Default;

        var (one, oneTimeline) =
            AnalysisPipeline.AnalyzeWithTimeline(trace, workload, null, false, null, AnalysisKind.All, null, window,
            analysisThreads: 0);
        var (many, manyTimeline) =
            AnalysisPipeline.AnalyzeWithTimeline(trace, workload, null, false, null, AnalysisKind.All, null, window,
            analysisThreads: threads);

        Assert.Equal(ReportJson.Serialize(one), ReportJson.Serialize(many));
        Assert.NotEmpty(oneTimeline!.Segments);
        Assert.Equal(JsonSerializer.Serialize(oneTimeline, TimelineJsonContext.Default.TimelineData),
            JsonSerializer.Serialize(manyTimeline, TimelineJsonContext.Default.TimelineData));
    }

    /// <summary>report.json is written as it is produced: the same bytes as the one-string form.</summary>
    [Theory]
    [InlineData("timemutex-mutex")]
    [InlineData("timemutex-cs")]
    public void Streamed_report_json_is_the_serialized_string(string sample)
    {
        var dir = Path.Combine(RepoPaths.SampleTraces, sample);
        var workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(dir, "workload.json")), "workload.json");
        var report = AnalysisPipeline.Analyze(Path.Combine(dir, "trace.dat"), workload, run: null, partial: false,
            pid: null);
        using var stream = new MemoryStream();
        ReportJson.Serialize(report, stream);
        Assert.True(report.Threads.Count > 1);
        Assert.Equal(System.Text.Encoding.UTF8.GetBytes(ReportJson.Serialize(report)), stream.ToArray());
    }

    [Fact]
    public void Mutex_sample_shows_the_convoy_and_cs_sample_does_not()
    {
        RunReport Load(string s) =>
            ReportJson.Deserialize(File.ReadAllText(Path.Combine(RepoPaths.SampleTraces, s, "report.json")));
        var mutex = Load("timemutex-mutex");
        var cs = Load("timemutex-cs");
        var mutexWorkers = mutex.Threads.Where(t => t.Workload is not null).ToList();
        Assert.Equal(4, mutexWorkers.Count);
        // Roughly one blocking wait per acquisition, and the waker is nearly always another worker.
        foreach (var t in mutexWorkers)
        {
            Assert.True(
                t.VoluntarySwitches > t.Workload!.Iterations / 4, $"{t.Tid}: {t.VoluntarySwitches} voluntary switches");
            var fromWorkers = t.TopWakers.Where(w => mutexWorkers.Any(m => m.Tid == w.Tid)).Sum(w => w.Count);
            Assert.True(fromWorkers > 0.9 * t.WakeupsReceived,
                $"{t.Tid}: {fromWorkers} of {t.WakeupsReceived} wakeups from workers");
        }
        Assert.True(cs.Threads.Where(t => t.Workload is not null).Sum(t => t.VoluntarySwitches) < 200);
    }

    /// <summary>
    /// Everything but the path the trace was read from and the run section (the capture wrote it, analyze does not).
    /// </summary>
    private static string Comparable(RunReport r)
    {
        var node = JsonNode.Parse(ReportJson.Serialize(r))!.AsObject();
        node.Remove("run");
        var capture = node["capture"]!.AsObject();
        capture["traceFile"] = Path.GetFileName(r.Capture.TraceFile);
        return node.ToJsonString(ReportJson.Options);
    }
}
