using System.Text.RegularExpressions;
using TraceLab.Capture.Linux;
using TraceLab.Workloads;

namespace TraceLab.IntegrationTests;

/// <summary>
/// Real captures of the TimeMutex scenarios (skipped, with the reason, where tracing is unavailable).
/// </summary>
public sealed class TimeMutexCaptureTests
{
    [TracingFact]
    public void Every_workload_thread_is_in_the_report_with_its_rusage()
    {
        using var run = Capture.Trace("timemutex", "mutex", ("iterations", "5000"));
        var workload =
            WorkloadResult.Parse(File.ReadAllText(Path.Combine(run.Directory, "workload.json")), "workload.json");
        Assert.Equal(4, workload.Threads.Count);
        foreach (var t in workload.Threads)
        {
            var reported = Assert.Single(run.Report.Threads, r => r.Tid == t.Tid);
            Assert.NotNull(reported.Workload);
            Assert.Equal(5000, reported.Workload!.Iterations);
            Assert.True(reported.RunNs > 0, $"thread {t.Tid} has no run time");
            Assert.Equal("timemutex", reported.Name);
        }
        Assert.Contains(run.Report.Threads, r => r.Tid == workload.Pid && r.Role == "main");
        Assert.Equal("markers", run.Report.Region.Source);
        Assert.False(run.Report.Capture.Partial);
        Assert.Equal(0, run.Report.Capture.LostEvents);
    }

    [TracingFact]
    public void Mutex_makes_far_more_voluntary_switches_per_acquisition_than_a_critical_section()
    {
        const int iterations = 20000;
        double PerAcquisition(Capture.Result r) =>
            r.Report.Threads.Where(t => t.Role?.StartsWith("worker", StringComparison.Ordinal) == true)
                .Sum(t => t.VoluntarySwitches) / (4.0 * iterations);
        // The convoy needs both CPUs of these 2-vCPU machines: while the host holds one (steal) the workers run one at
        // a time, each through its time slice, and seldom block (a CI run of e7ed151: 0.035 per acquisition; the same
        // test alone, four times after: passed). Such a run is taken again, up to three in all; a count that broke
        // fails all three.
        var attempts = new List<string>();
        double m;
        while (true)
        {
            var stealBefore = HostSteal.TotalNs();
            using var mutex = Capture.Trace("timemutex", "mutex", ("iterations", iterations.ToString()));
            m = PerAcquisition(mutex);
            attempts.Add($"{m:0.000} (host steal {(HostSteal.TotalNs() - stealBefore) / 1e6:F0} ms)");
            if (m > 0.2 || attempts.Count == 3) break;
        }
        using var cs = Capture.Trace("timemutex", "cs", ("iterations", iterations.ToString()));
        var c = PerAcquisition(cs);
        // A kernel-object lock handed over through the wait queue blocks on most acquisitions (a convoy);
        // the futex lock's user-space fast path almost never does.
        Assert.True(m > 0.2, $"mutex: voluntary switches per acquisition in each run: {string.Join(", ", attempts)}");
        Assert.True(m > 20 * Math.Max(c, 0.001), $"mutex {m:0.000} vs cs {c:0.000} voluntary switches per acquisition");
    }

    [TracingFact(needsTraceCmd: true)]
    public void Switch_count_equals_what_trace_cmd_report_prints()
    {
        using var run = Capture.Trace("timemutex", "mutex", ("iterations", "10000"));
        var lines = ProcessOutput.Lines("trace-cmd", "report", "-i", run.TraceFile);
        var switches = lines.Count(l => l.Contains(" sched_switch: ", StringComparison.Ordinal));
        Assert.True(switches > 1000);
        Assert.Equal(switches, run.Report.Capture.SwitchEvents);
    }

    [TracingFact]
    public void Workload_getrusage_agrees_with_traced_run_time()
    {
        var stealBefore = HostSteal.TotalNs();
        using var run = Capture.Trace("timemutex", "mutex", ("iterations", "20000"));
        var steal = HostSteal.TotalNs() - stealBefore;
        // getrusage is tick-sampled on some kernels: compare the process totals, not single threads.
        var p = run.Report.Process!;
        var rusage = p.UserNs!.Value + p.SystemNs!.Value;
        var traced = p.TracedRunNs;
        // The kernel charges a task the scheduler path around each of its switches, outside the sched_switch
        // interval the trace measures: negligible on a quiet machine (70,000 switches, traced 99-100 % of getrusage),
        // 1.5-1.9 µs per switch beside `stress-ng --cpu 4` on 2 vCPUs (traced 81-85 %; every switch logged, 0 lost;
        // docs/testing.md#rusage-switch-allowance). Below getrusage, allow 3 µs per switch on top of the 15 %.
        var allowance = (p.VoluntarySwitches + p.InvoluntarySwitches) * 3_000L;
        // Above it, the time the hypervisor took the vCPUs away during the run (steal): inside a traced interval, never
        // charged to the task (docs/testing.md#rusage-steal-allowance). At most all of it was the workload's.
        Assert.InRange(traced, rusage * 0.85 - allowance, rusage * 1.15 + steal);
    }

    [TracingFact]
    public void No_tracelab_instance_is_left_after_a_run()
    {
        using (Capture.Trace("timemutex", "cs", ("iterations", "1000"))) { }
        var instances = Path.Combine(Tracefs.Locate(), "instances");
        var mine = Directory.GetDirectories(instances).Select(Path.GetFileName)
            .Where(n => TracefsInstance.OwnerOf(n!) == Environment.ProcessId);
        Assert.Empty(mine);
    }

    [TracingFact]
    public void Stale_instance_of_a_dead_owner_is_removed_and_others_are_left_alone()
    {
        var root = Tracefs.Locate();
        // pid_max is at most 2^22: this pid cannot be alive.
        var staleName = TracefsInstance.NameFor(4_194_400, "stale-test");
        var foreign = "not-tracelab-" + Guid.NewGuid().ToString("N")[..8];
        Directory.CreateDirectory(Path.Combine(root, "instances", staleName));
        Directory.CreateDirectory(Path.Combine(root, "instances", foreign));
        try
        {
            var stale = TracefsInstance.RemoveStale(root);
            Assert.Contains(staleName, stale.Removed);
            Assert.DoesNotContain(stale.Kept, line => line.Contains(staleName, StringComparison.Ordinal));
            Assert.DoesNotContain(foreign, stale.Removed);
            Assert.False(Directory.Exists(Path.Combine(root, "instances", staleName)));
            Assert.True(Directory.Exists(Path.Combine(root, "instances", foreign)));
        }
        finally
        {
            foreach (var n in new[] { staleName, foreign })
                if (Directory.Exists(Path.Combine(root, "instances", n)))
                    Directory.Delete(Path.Combine(root, "instances", n));
        }
    }

    [TracingFact]
    public void Markers_delimit_the_workloads_own_timed_span()
    {
        using var run = Capture.Trace("timemutex", "cs", ("iterations", "100000"));
        var workload =
            WorkloadResult.Parse(File.ReadAllText(Path.Combine(run.Directory, "workload.json")), "workload.json");
        // trace_clock=mono: trace timestamps are CLOCK_MONOTONIC, the clock the workload times itself with.
        Assert.InRange(run.Report.Region.BeginNs, workload.BeginNs - 1_000_000, workload.BeginNs);
        Assert.InRange(run.Report.Region.EndNs, workload.EndNs, workload.EndNs + 1_000_000);
        Assert.Matches(new Regex("^mono$"), run.Report.Capture.Clock ?? "");
    }
}
