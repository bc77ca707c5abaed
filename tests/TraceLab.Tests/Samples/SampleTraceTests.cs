using System.Text.Json;
using System.Text.Json.Nodes;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Sections;
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
            TraceAnalysis.Analyze(Path.Combine(dir, "trace.dat"), workload, pid: null);

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
            TraceAnalysis.Run(
                new AnalysisRequest(trace) { Workload = workload, Timeline = window, AnalysisThreads = 0 });
        var (many, manyTimeline) =
            TraceAnalysis.Run(
                new AnalysisRequest(trace) { Workload = workload, Timeline = window, AnalysisThreads = threads });

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
        var report = TraceAnalysis.Analyze(Path.Combine(dir, "trace.dat"), workload, pid: null);
        using var stream = new MemoryStream();
        ReportJson.Serialize(report, stream);
        Assert.True(report.Threads.Count > 1);
        Assert.Equal(System.Text.Encoding.UTF8.GetBytes(ReportJson.Serialize(report)), stream.ToArray());
    }

    /// <summary>
    /// The sample traces re-analyzed now (not the stored reports): the mutex run is a lock convoy on the workload's
    /// own System V semaphore, checked against what the workload itself recorded (its semaphore id, its threads,
    /// their iterations and getrusage switch counts); the critical-section run has no convoy.
    /// </summary>
    [Fact]
    public void Mutex_sample_shows_the_convoy_and_cs_sample_does_not()
    {
        (RunReport Report, WorkloadResult Workload) Analyze(string sample)
        {
            var dir = Path.Combine(RepoPaths.SampleTraces, sample);
            var workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(dir, "workload.json")), "workload.json");
            return (TraceAnalysis.Analyze(Path.Combine(dir, "trace.dat"), workload, pid: null), workload);
        }

        var (mutex, mutexRun) = Analyze("timemutex-mutex");
        var (cs, _) = Analyze("timemutex-cs");
        var mutexWorkers = mutex.Threads.Where(t => t.Workload is not null).ToList();
        Assert.Equal(mutexRun.Threads.Select(t => t.Tid).Order(), mutexWorkers.Select(t => t.Tid).Order());
        // Roughly one blocking wait per acquisition, and the waker is nearly always another worker.
        foreach (var t in mutexWorkers)
        {
            Assert.True(
                t.VoluntarySwitches > t.Workload!.Iterations / 4, $"{t.Tid}: {t.VoluntarySwitches} voluntary switches");
            var fromWorkers = t.TopWakers.Where(w => mutexWorkers.Any(m => m.Tid == w.Tid)).Sum(w => w.Count);
            Assert.True(fromWorkers > 0.9 * t.WakeupsReceived,
                $"{t.Tid}: {fromWorkers} of {t.WakeupsReceived} wakeups from workers");
        }

        // The convoy section: the lock is the semaphore the workload names, acquired once per iteration of each
        // worker; every handoff needs its receiver to have blocked, so handoffs cannot exceed the workers' voluntary
        // switches by getrusage; every worker takes part, receiving and giving handoffs; the convoy covers most of
        // the region.
        var convoys = Assert.IsType<ConvoySection>(mutex.Convoys);
        var semId = Assert.Single(mutexRun.Objects, o => o.Kind == "sysv-sem").Id;
        var sem = Assert.Single(convoys.Objects, o => o.Kind == "SysVSemaphore");
        Assert.StartsWith($"sysv-sem {semId} ", sem.Object, StringComparison.Ordinal);
        Assert.Equal(mutexRun.Threads.Sum(t => t.Iterations), sem.Acquisitions);
        Assert.Equal(sem.Acquisitions, sem.FastAcquisitions + sem.BlockingWaits);
        Assert.InRange(sem.Handoffs, 1, mutexRun.Threads.Sum(t => t.VoluntarySwitches));
        Assert.True(sem.Episodes >= 1, $"{sem.Episodes} convoy episodes");
        Assert.True(sem.ConvoyShareOfRegion > 0.5, $"convoy covers {sem.ConvoyShareOfRegion:P0} of the region");
        Assert.Equal(mutexRun.Threads.Select(t => t.Tid).Order(), sem.Participants.Order());
        Assert.All(mutexWorkers, w =>
        {
            var c = Assert.Single(convoys.Threads, t => t.Tid == w.Tid);
            Assert.True(c.HandoffsReceived > 0 && c.HandoffsGiven > 0 && c.TimeInConvoyNs > 0, $"worker {w.Tid}");
        });
        Assert.Equal(sem.Handoffs, convoys.Threads.Sum(t => t.HandoffsReceived));

        Assert.True(cs.Threads.Where(t => t.Workload is not null).Sum(t => t.VoluntarySwitches) < 200);
        var csConvoys = Assert.IsType<ConvoySection>(cs.Convoys);
        Assert.NotEmpty(csConvoys.Objects);
        Assert.All(csConvoys.Objects, o => Assert.Equal(0, o.Episodes));
        Assert.True(csConvoys.Objects.Sum(o => o.Handoffs) < 10, "the critical section's futex handed over often");
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
