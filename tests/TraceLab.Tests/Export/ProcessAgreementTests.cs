using TraceLab.Analyzers;
using TraceLab.Cli;
using TraceLab.Core;
using TraceLab.Core.Syscalls;
using TraceLab.Export.Perfetto;
using TraceLab.Reporting;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Export;

/// <summary>
/// report.json and the Perfetto export put every thread in the same process: both ask <see cref="ProcessLineage"/>
/// (docs/metrics.md#thread-pid). The report groups kernel threads as one process (pid 2); the export keeps each
/// kernel thread's own process, so a thread the report shows under that group is checked to be a kernel thread.
/// </summary>
public sealed class ProcessAgreementTests
{

    private static (int Compared, List<string> Disagreements) Compare(string path) =>
        Compare(() => TraceFiles.Open(path));

    private static (int Compared, List<string> Disagreements) Compare(Func<IKernelTraceReader> open)
    {
        RunReport report;
        using (var reader = open())
        using (var session = new AnalysisSession(AnalysisSelection.All, names: reader.Threads))
        {
            reader.Read(session.Sink);
            session.Complete();
            report = ReportBuilder.Build(reader.Info, session.Names, session, workload: null);
        }
        using var ms = new MemoryStream();
        using (var reader = open()) PerfettoExporter.Export(reader, ms);
        var file = new PerfettoTraceFile(ms.ToArray());
        var kernelGroup = report.Processes.FirstOrDefault(p => p.Pid == ProcessLineage.KernelThreadsPid)
            ?.KernelThreads == true;
        var byKernelTid = report.Threads.GroupBy(t => t.KernelTid ?? t.Tid).ToDictionary(g => g.Key, g => g.ToList());
        var compared = 0;
        var disagreements = new List<string>();
        foreach (var d in file.Tracks.Values.Where(d => d.Thread is not null))
        {
            // A reused tid has one track per thread, all with the kernel's tid: compare only tids of one thread.
            if (!byKernelTid.TryGetValue((int)d.Thread.Tid, out var threads) || threads.Count != 1) continue;
            var t = threads[0];
            compared++;
            if (t.Pid == d.Thread.Pid) continue;
            if (t.Pid == ProcessLineage.KernelThreadsPid && kernelGroup) continue;
            disagreements.Add($"tid {t.Tid} ({t.Name}): report.json pid {t.Pid}, Perfetto pid {d.Thread.Pid}");
        }
        return (compared, disagreements);
    }

    /// <summary>
    /// A tracefs-like trace (no stated pids): init forks process 100 (task_newtask without CLONE_THREAD), which
    /// creates threads 101 and 102; they hand a private futex back and forth six times. No marker, no target: the
    /// export has no exported process, so every thread track is placed by the lineage (100), as the report does.
    /// </summary>
    private sealed class ServerReader : IKernelTraceReader
    {
        private const long Mutex = 0x7000;

        public TraceInfo Info { get; } = new() { Backend = "test", TraceFile = "server", CpuCount = 2 };
        public ThreadTable Threads { get; } = new();

        public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
        {
            Threads.SetName(1, "init");
            Threads.SetName(100, "server");
            Threads.SetName(101, "worker");
            Threads.SetName(102, "worker");
            List<KernelEvent> events =
            [
                KernelEvent.Switch(0, 0, 0, 120, R, 1, 120),
                KernelEvent.Fork(10, 0, 1, 100, ForkChild.Process),
                KernelEvent.Switch(20, 0, 1, 120, S, 100, 120),
                KernelEvent.Fork(30, 0, 100, 101, ForkChild.Thread),
                KernelEvent.Fork(40, 0, 100, 102, ForkChild.Thread),
                KernelEvent.Switch(50, 0, 100, 120, S, 101, 120),
                KernelEvent.Switch(60, 1, 0, 120, R, 102, 120),
            ];
            for (var i = 0; i < 6; i++)
            {
                var t = 1000 + i * 1000L;
                var (a, b) = i % 2 == 0 ? (101, 102) : (102, 101);
                int cpuA = a - 101, cpuB = b - 101;
                events.Add(Enter(t, cpuA, a, LinuxSyscalls.Futex, Mutex, FutexWait));
                events.Add(KernelEvent.Switch(t + 10, cpuA, a, 120, S, 0, 120));
                events.Add(Enter(t + 100, cpuB, b, LinuxSyscalls.Futex, Mutex, FutexWake));
                events.Add(KernelEvent.Waking(t + 110, cpuB, b, a, cpuA));
                events.Add(Exit(t + 120, cpuB, b, LinuxSyscalls.Futex, 1));
                events.Add(KernelEvent.Switch(t + 200, cpuA, 0, 120, R, a, 120));
                events.Add(Exit(t + 210, cpuA, a, LinuxSyscalls.Futex));
            }
            foreach (var e in events) sink.OnEvent(e);
        }

        public void Dispose() { }
    }

    [Fact]
    public void Threads_created_in_the_trace_are_in_their_creators_process_in_both()
    {
        var (compared, disagreements) = Compare(() => new ServerReader());
        Assert.Equal(2, compared);
        Assert.Empty(disagreements);
    }

    [Theory]
    [InlineData("timemutex-mutex/trace.dat")]
    [InlineData("timemutex-cs/trace.dat")]
    [InlineData("perf-timemutex-mutex/capture.perf.data")]
    public void The_samples_put_every_thread_in_the_same_process(string sample)
    {
        var (compared, disagreements) = Compare(Path.Combine(RepoPaths.SampleTraces, sample));
        Assert.True(compared >= 4, $"only {compared} threads have a Perfetto thread track");
        Assert.Empty(disagreements);
    }

    /// <summary>
    /// Every third-party trace: perf.data, trace.dat v6 and v7 (LISA's busy 50-thread trace among them), .etl.
    /// </summary>
    [ExternalTraceTheory("perf/perfparser_parallel_static_gcc.zstd.perf.data", "tracecmd/lisa_example_rtapp_v6.dat",
        "tracecmd/lisa_trappy_tests_trace_v6.dat", "tracecmd/hip24_taskset_guest_v7zlib.dat",
        "tracecmd/hip24_test_guest_v7zlib.dat", "tracecmd/hip24_test_host_kvm_v7zlib.dat",
        "etw/perfview_net452_x64.etl.zip", "etw/etlparser_ShutdownPerfDiagLogger.etl",
        "etw/etwanalyzer_TraceLoggingTester.etl.zip")]
    [InlineData("perf/perfparser_parallel_static_gcc.zstd.perf.data", false)]
    [InlineData("tracecmd/lisa_example_rtapp_v6.dat", true)]
    [InlineData("tracecmd/lisa_trappy_tests_trace_v6.dat", true)]
    [InlineData("tracecmd/hip24_taskset_guest_v7zlib.dat", true)]
    [InlineData("tracecmd/hip24_test_guest_v7zlib.dat", true)]
    [InlineData("tracecmd/hip24_test_host_kvm_v7zlib.dat", false)]
    [InlineData("etw/perfview_net452_x64.etl.zip", false)]
    [InlineData("etw/etlparser_ShutdownPerfDiagLogger.etl", false)]
    [InlineData("etw/etwanalyzer_TraceLoggingTester.etl.zip", false)]
    public void A_third_party_trace_puts_every_thread_in_the_same_process(string trace, bool threadTracks)
    {
        var (compared, disagreements) = Compare(ExternalTraces.PathOf(trace));
        Assert.Empty(disagreements);
        // Where the export has thread tracks (scheduler events of named threads), some were compared.
        if (threadTracks) Assert.True(compared > 0, $"no thread of {trace} has a Perfetto thread track");
    }
}
