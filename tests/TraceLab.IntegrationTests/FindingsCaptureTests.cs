using TraceLab.Capture.Linux;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Findings;

namespace TraceLab.IntegrationTests;

/// <summary>
/// Ground truth for the findings (docs/metrics.md, "Findings"): scenarios whose cause is known by construction, each
/// captured for real (short runs), and one program TraceLab did not write, with the expected finding stated before it
/// runs. Each test names the top finding it expects and what must not be raised.
/// </summary>
public sealed class FindingsCaptureTests
{
    private readonly ITestOutputHelper _output;

    public FindingsCaptureTests(ITestOutputHelper output) => _output = output;

    private List<FindingSection> Findings(RunReport report)
    {
        Assert.NotNull(report.Findings);
        foreach (var f in report.Findings!)
            _output.WriteLine($"{f.Severity:P1} {f.Kind}: {f.Title} [{string.Join(", ", f.Windows)}]");
        foreach (var f in report.Findings)
        {
            Assert.InRange(f.Severity, FindingEngine.SeverityFloor, 1);
            Assert.NotEmpty(f.Evidence);
        }
        var program = ProgramFindings.Of(report.Findings);
        Assert.All(program, f => Assert.NotEmpty(f.Claims));
        return program;
    }

    [TracingFact]
    public void Kernel_mutex_is_a_lock_convoy_on_the_semaphore_and_a_kernel_lock_where_a_fast_path_would_do()
    {
        using var run = Capture.Trace("timemutex", "mutex", ("iterations", "20000"));
        var findings = Findings(run.Report);
        var sem = run.Report.Convoys!.Objects.Single(o => o.Kind == "SysVSemaphore" && o.Handoffs > 0).Object;
        Assert.Equal(["kernel-lock", "lock-convoy"], findings.Take(2).Select(f => f.Kind).Order());
        Assert.All(findings.Take(2), f => Assert.Equal([sem], f.Objects));
        // Every window is usable with --timeline-window.
        Assert.All(findings.SelectMany(f => f.Windows), w => Assert.True(w.LengthNs > 0 && w.StartOffsetNs >= 0));
        Assert.NotEmpty(findings.First(f => f.Kind == "lock-convoy").Windows);
    }

    [TracingFact]
    public void One_thread_in_a_critical_section_has_no_findings()
    {
        using var run = Capture.Trace("timemutex", "cs", ("threads", "1"), ("iterations", "200000"));
        Assert.Empty(Findings(run.Report));
        if (run.Report.Findings!.Count == 0)
            Assert.Contains("No findings above the floor", File.ReadAllText(Path.Combine(run.Directory, "report.md")));
    }

    [TracingFact]
    public void Yielding_while_holding_the_critical_section_is_found()
    {
        using var run = Capture.Trace("timemutex", "sleep-holding", ("iterations", "20000"));
        var top = Findings(run.Report)[0];
        Assert.Equal("yield-while-holding", top.Kind);
        Assert.Equal(["TM6"], top.Claims);
        // The holders' yields are sched_yield calls the trace shows: one per iteration and worker.
        Assert.Equal(4 * 20000, top.Evidence.Single(e => e.Metric.EndsWith("(sched_yield)",
            StringComparison.Ordinal)).Value);
    }

    /// <summary>
    /// The scenario never yields (sleep points 0). On a loaded machine the gate's holder can still sleep in the kernel
    /// while holding it (seen once in CI: a page fault under memory pressure, 54 % against serialization's 52 %), and
    /// yield-while-holding is then rightly listed on the same gate: it is not counted against the ranking here.
    /// </summary>
    [TracingFact]
    public void A_gate_admitting_one_thread_is_serialization_not_a_convoy()
    {
        using var run = Capture.Trace("timemutex", "serialized", ("iterations", "1000000"));
        var all = Findings(run.Report);
        var findings = all.Where(f => f.Kind != "yield-while-holding").ToList();
        var top = findings[0];
        Assert.Equal("serialization", top.Kind);
        Assert.All(all.Where(f => f.Kind == "yield-while-holding"), f => Assert.Equal(top.Objects, f.Objects));
        // The gate is the object five of the six workers blocked on once each; the critical section is no convoy.
        Assert.Equal(5, top.Evidence.Single(e => e.Metric == "findings.evidence.blockingWaits").Value);
        Assert.DoesNotContain(findings, f => f.Kind == "lock-convoy");
    }

    /// <summary>
    /// On a shared machine other processes' higher-priority tasks can preempt the workload too (seen: 16.9 % under a
    /// load average of 35), and that finding (priority-preemption) is then rightly listed as well: it is not counted
    /// against the ranking here.
    /// </summary>
    [TracingFact]
    public void Sixteen_cpu_bound_threads_on_two_cpus_are_oversubscription()
    {
        using var run = Capture.Trace("throttle", "unthrottled", ("threads", "16"), ("chunk", "100000000"), ("repeat",
            "1"));
        var findings = Findings(run.Report);
        Assert.True(run.Report.Capture.Cpus < 16);
        var own = findings.Where(f => f.Kind != "priority-preemption").ToList();
        Assert.NotEmpty(own);
        Assert.Equal("oversubscription", own[0].Kind);
        Assert.Equal(["TH1", "TH2"], own[0].Claims);
        Assert.True(own[0].Threads.Count >= 8, $"{own[0].Threads.Count} threads in the oversubscription");
    }

    /// <summary>
    /// One sender, not the scenario's three: three CPU-bound senders on a 2-CPU machine are an oversubscription of
    /// their own, keep the receiver waiting for a CPU most of the time, and the wakeups inside the lock then explain
    /// only 3–7 % of the threads' time, around the floor (measured). Pinned to one CPU, as on the seed's
    /// uniprocessor: the woken receiver preempts the sender inside the lock and blocks on it (34 % measured on an idle
    /// machine). On two idle CPUs the receiver wakes on the other CPU after the short hold ends and the effect falls
    /// under the floor (0 findings in 3 runs); it only showed there when other load kept the CPUs busy.
    /// </summary>
    [TracingFact]
    public void Setting_the_event_inside_the_lock_is_wake_while_holding_of_the_receiver()
    {
        using var run = Capture.Trace("sendrecv", "event-inside-lock", ("senders", "1"), ("affinity", "0"),
            ("duration-ms", "500"));
        var findings = Findings(run.Report);
        Assert.True(findings.Count > 0, "no finding above the floor");
        var top = findings[0];
        Assert.Equal("wake-while-holding", top.Kind);
        var receiver = run.Report.Threads.Single(t => t.Role == "receiver").Tid;
        Assert.Contains(receiver, top.Threads);
        Assert.StartsWith("Wake while holding futex", top.Title);
        Assert.Contains($"({receiver}, receiver)", top.Title);
    }

    /// <summary>
    /// One sender, as above: with three CPU-bound senders on 2 CPUs the run is an oversubscription. No lock, so no
    /// finding about one. What such a run may still show above the floor is the cost of the receiver's wakeups being
    /// on another CPU than their waker's: on a host where that costs several µs a wakeup (a paravirtual VM in one CI
    /// run: median 8.1 µs across CPUs against 1.1 µs on the waker's CPU, 13,482 wakeups, 6.3 % of the threads' time)
    /// it is over the floor, elsewhere under it (0 findings in earlier runs). When it is there, its evidence says so.
    /// </summary>
    [TracingFact]
    public void Lock_free_send_and_receive_has_no_lock_findings()
    {
        using var run = Capture.Trace("sendrecv", "lock-free", ("senders", "1"), ("duration-ms", "500"));
        var findings = Findings(run.Report);
        Assert.All(findings, f => Assert.Equal("cross-cpu-wakeups", f.Kind));
        foreach (var f in findings)
        {
            double Figure(string metric) => f.Evidence.Single(e => e.Metric == metric).Value;
            Assert.True(Figure("wakeups.threads[].crossCpuLatency.p50Ns (max)")
                > Figure("wakeups.threads[].sameCpuLatency.p50Ns (max)"), "cross-CPU wakeups no slower");
            Assert.True(Figure("wakeups.threads[].crossCpuLatency.count") > 0);
        }
    }

    /// <summary>
    /// A program TraceLab did not write: `sysbench threads` with one lock. Its worker loop (sysbench's threads test)
    /// takes the mutex, calls sched_yield() and releases it, so before the run we expect the top finding to be a
    /// yield while holding that futex.
    /// </summary>
    [PerfProgramFact("sysbench")]
    public void Sysbench_threads_with_one_lock_is_a_yield_while_holding()
    {
        using var dir = new TempDirectory("tracelab-sysbench");
        var perfData = Path.Combine(dir.Path, "sysbench.perf.data");
        var pidFile = Path.Combine(dir.Path, "pid");
        var events = string.Join(',', PerfRecord.Events(SyscallSet.Lock));
        var (code, _, err) = ProcessOutput.Run("perf", "record", "-q", "-m", "16M", "-o", perfData, "-a", "-e",
            events, "--",
            "sh", "-c", $"echo $$ > '{pidFile}'; exec sysbench threads --threads=4 --thread-locks=1 --time=1 run");
        Assert.True(code == 0, $"perf record exited {code}: {err}");
        var pid = int.Parse(File.ReadAllText(pidFile).Trim(), System.Globalization.CultureInfo.InvariantCulture);
        var report = TraceAnalysis.Analyze(perfData, workload: null, pid: pid);
        var top = Findings(report)[0];
        Assert.Equal("yield-while-holding", top.Kind);
        Assert.Single(top.Objects);
        Assert.StartsWith("futex 0x", top.Objects[0]);
    }
}

/// <summary>A <see cref="PerfFactAttribute"/> that also needs its program on the PATH.</summary>
public sealed class PerfProgramFactAttribute : FactAttribute
{
    public PerfProgramFactAttribute(string program)
    {
        var reason = PerfEnvironment.Reason.Value;
        if (reason is null && !TestEnvironment.OnPath(program))
            reason = $"{program} not installed (apt-get install -y {program})";
        if (reason is not null) Skip = reason;
    }
}
