using TraceLab.Reporting.Sections;

namespace TraceLab.IntegrationTests;

/// <summary>
/// Ground truth for the analyzers on real captures: scenarios whose contention pattern is known by construction
/// (docs/metrics.md#lock-convoys), checked against independent counts — the workload's own iterations and getrusage.
/// </summary>
public sealed class AnalyzerCaptureTests : IClassFixture<AnalyzerCaptureTests.MutexCapture>
{
    private const int Iterations = 20_000;
    private readonly Lazy<Capture.Result> _mutex;

    public AnalyzerCaptureTests(MutexCapture mutex) => _mutex = mutex.Run;

    /// <summary>
    /// One capture of the kernel-mutex scenario serves the mutex facts (captures cost seconds each); taken on first
    /// use.
    /// </summary>
    public sealed class MutexCapture : IDisposable
    {
        public Lazy<Capture.Result> Run { get; } =
            new(() => Capture.Trace("timemutex", "mutex", ("iterations", Iterations.ToString())));

        public void Dispose()
        {
            if (Run.IsValueCreated) Run.Value.Dispose();
        }
    }

    private static List<int> Workers(Capture.Result run) =>
        run.Report.Threads.Where(t => t.Role?.StartsWith("worker", StringComparison.Ordinal) == true).Select(t => t.Tid)
            .ToList();

    [TracingFact]
    public void Mutex_lock_is_a_convoy_covering_most_of_the_region()
    {
        var run = _mutex.Value;
        var c = run.Report.Convoys!;
        Assert.Equal("syscalls", c.ObjectSource);
        var sem = c.Objects.Single(o => o.Kind == "SysVSemaphore" && o.Handoffs > 0);
        var workers = Workers(run);
        Assert.Equal(4, workers.Count);
        // Every acquisition is a semop the trace shows: the count must be exactly what the workload did.
        Assert.Equal(workers.Count * (long)Iterations, sem.Acquisitions);
        Assert.True(sem.ConvoyShareOfRegion > 0.5, $"convoy covers {sem.ConvoyShareOfRegion:P1} of the region");
        Assert.True(sem.Episodes >= 1);
        Assert.True(sem.HandoffShare > 0.2, $"handoff share {sem.HandoffShare:P1}");
        Assert.Superset(workers.ToHashSet(), sem.Participants.ToHashSet());
        foreach (var t in c.Threads.Where(t => workers.Contains(t.Tid)))
        {
            Assert.True(t.HandoffsReceived > 0 && t.HandoffsGiven > 0, $"worker {t.Tid} took no part in handoffs");
            Assert.True(t.TimeInConvoyNs > 0);
        }
    }

    [TracingFact]
    public void Mutex_kernel_time_agrees_with_getrusage_within_ten_percent()
    {
        var run = _mutex.Value;
        var k = run.Report.Kernel!;
        Assert.True(k.Captured);
        foreach (var t in k.Threads.Where(t => Workers(run).Contains(t.Tid)))
            // one P and one V per iteration
            Assert.Equal(2L * Iterations, t.Syscalls.Single(s => s.Name == "semtimedop").Calls);
        // The kernel's share of the workers' CPU time, by the trace and by getrusage. Shares, not absolute times: how
        // much run time the trace covers is a separate check (TimeMutexCaptureTests, ±15 % of getrusage's user +
        // system); on VMs where one CPU's switches out of idle are never logged the traced run time is several % below
        // getrusage's, which would otherwise count twice here (docs/metrics.md#boundary-cost).
        var workers = k.Threads.Where(t => Workers(run).Contains(t.Tid)).ToList();
        var tracedShare = (double)workers.Sum(t => t.EstimatedKernelNs) / workers.Sum(t => t.RunNs);
        var rusageShare = (double)workers.Sum(t => t.RusageSystemNs!.Value) /
            workers.Sum(t => t.RusageSystemNs!.Value + t.RusageUserNs!.Value);
        Assert.InRange(tracedShare / rusageShare, 0.9, 1.1);
        // What lies strictly between the syscall tracepoints can only be less than what getrusage counts as system
        // time.
        Assert.True(k.KernelCpuNs < k.RusageSystemNs * 1.1);
    }

    [TracingFact]
    public void Mutex_workers_form_one_wait_for_knot()
    {
        var run = _mutex.Value;
        var knot = Assert.Single(run.Report.WaitGraph!.Knots);
        Assert.Superset(knot.Vertices.ToHashSet(), Workers(run).ToHashSet());
    }

    [TracingFact]
    public void Critical_section_with_one_thread_has_no_handoffs()
    {
        using var run = Capture.Trace("timemutex", "cs", ("threads", "1"), ("iterations", "200000"));
        Assert.All(run.Report.Convoys!.Objects, o =>
        {
            Assert.Equal(0, o.Handoffs);
            Assert.Equal(0, o.Episodes);
        });
    }

    [TracingFact]
    public void Yielding_while_holding_a_critical_section_makes_a_convoy()
    {
        using var run = Capture.Trace("timemutex", "sleep-holding", ("iterations", Iterations.ToString()));
        var futex = run.Report.Convoys!.Objects.Where(o => o.Kind == "Futex").MaxBy(o => o.Handoffs)!;
        Assert.True(futex.Episodes >= 1, "no convoy episode on the critical section's futex");
        Assert.True(futex.HandoffsInConvoys > 100, $"{futex.HandoffsInConvoys} handoffs in convoys");
        Assert.Null(futex.Acquisitions);                                      // futex fast path is invisible
    }

    [TracingFact]
    public void Serialized_threads_hand_over_a_gate_but_make_no_convoy()
    {
        using var run = Capture.Trace("timemutex", "serialized", ("iterations", "200000"));
        Assert.All(run.Report.Convoys!.Objects, o => Assert.Equal(0, o.Episodes));
    }

    [TracingFact]
    public void Pinned_run_has_no_migrations_and_no_cross_cpu_wakeups()
    {
        using var run = Capture.Trace("timemutex", "pinned", ("iterations", "200000"));
        var workers = Workers(run);
        var smp = run.Report.Smp!;
        foreach (var t in smp.Threads.Where(t => workers.Contains(t.Tid)))
        {
            Assert.Equal(0, t.Migrations);
            Assert.Equal(0, t.CpuChanges);
            Assert.Equal(0, t.WakeupsReceivedCrossCpu);
            Assert.Equal(0, t.WakeupsGivenCrossCpu);
            Assert.Equal(0, t.ResidencyNs.Skip(1).Sum());                     // all of it on CPU 0
        }
        foreach (var t in run.Report.Wakeups!.Threads.Where(t => workers.Contains(t.Tid)))
            Assert.Equal(0, t.CrossCpuLatency.Count);
    }
}
