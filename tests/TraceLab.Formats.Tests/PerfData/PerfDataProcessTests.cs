using TraceLab.Analyzers;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// Hand-built perf.data files with known answers for a fact perf records beside the tracepoints: the process of
/// each sample's thread (PERF_SAMPLE_TID's pid).
/// </summary>
public sealed class PerfDataProcessTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    private PerfDataReader Read(PerfDataBuilder b) => b.WriteAndRead(_files.Directory);

    /// <summary>
    /// Threads 301 and 302 of process 300 and thread 401 of process 400 existed before the recording: no FORK record
    /// says whose they are, only the pid in their samples (and, for 401, perf's synthesized COMM record); 502 was
    /// forked in the recording as a thread of 500.
    /// </summary>
    [Fact]
    public void Each_threads_process_comes_from_its_samples_comm_and_fork_records()
    {
        using var reader = Read(new PerfDataBuilder()
            .Comm(400, 401, "worker", 0, 0)
            .Sample(10, 0, TestTraceFile.Switch(301, 302), pid: 300, tid: 301)
            .Sample(20, 0, TestTraceFile.Switch(302, 0), pid: 300, tid: 302)
            .Sample(30, 1, TestTraceFile.Switch(0, 401), pid: 0, tid: 0)
            .Task(7, 35, 1, 502, 501, pid: 500)
            .Sample(40, 1, TestTraceFile.Switch(401, 0), pid: 400, tid: 401)
            .Sample(50, 0, TestTraceFile.Switch(0, 301), pid: 0, tid: 0)
            .FinishedRound());

        var stated = reader.Threads.Processes;
        Assert.Equal(300, stated[301]);
        Assert.Equal(300, stated[302]);
        Assert.Equal(400, stated[401]);
        Assert.Equal(500, stated[502]);
        // The idle task (pid 0, tid 0) states nothing.
        Assert.False(stated.ContainsKey(0));
        Assert.Equal(4, stated.Count);
    }

    /// <summary>
    /// A tid reused by another process: tid 200 is a thread of process 100 until it exits; the new 200 (a thread of
    /// 300) gets its own id and the process its own samples state. The reader states processes as it scans, up to
    /// one perf round ahead of delivery: the reuse lies two rounds after the exit (docs/formats.md#perfdata).
    /// </summary>
    [Fact]
    public void A_reused_tid_keeps_the_process_each_of_its_threads_had()
    {
        var switchTo200 = TidReuseTests.Switch(0, "swapper/0", 0, 200, "w");
        var path = Path.Combine(_files.Directory, "reuse.perf.data");
        File.WriteAllBytes(path, new PerfDataBuilder()
            .Sample(1, 0, switchTo200, pid: 0, tid: 0)
            .Sample(90, 0, TidReuseTests.Exit(200, "w"), pid: 100, tid: 200)
            .Sample(100, 0, TidReuseTests.Switch(200, "w", Core.TaskState.ExitDead, 0, "swapper/0"), pid: 100, tid: 200)
            .FinishedRound()
            .Sample(200, 1, TidReuseTests.Switch(0, "swapper/1", 0, 1, "init"), pid: 0, tid: 0)
            .FinishedRound()
            .Sample(400, 0, switchTo200, pid: 0, tid: 0)
            .Sample(500, 0, TidReuseTests.Switch(200, "w", Core.TaskState.Interruptible, 0, "swapper/0"),
                pid: 300, tid: 200)
            .FinishedRound()
            .Build());
        using var reader = PerfDataReader.Open(path, new TraceReadOptions());
        using var session = new AnalysisSession(AnalysisSelection.Threads, names: reader.Threads);
        reader.Read(session);
        session.Complete();

        Assert.Equal(100, reader.Threads.Processes[200]);
        Assert.Equal(300, reader.Threads.Processes[Core.ThreadIds.Of(200, 2)]);
    }
}
