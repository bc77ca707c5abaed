using TraceLab.Capture.Linux;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.IntegrationTests;

/// <summary>
/// A real `perf record -a` capture of the kernel-mutex workload, analyzed by TraceLab from the perf.data file and
/// compared per thread with what perf sched computes from the same file, and with the workload's getrusage.
/// </summary>
public sealed class PerfDataCaptureTests
{
    private readonly ITestOutputHelper _output;

    public PerfDataCaptureTests(ITestOutputHelper output) => _output = output;

    [PerfFact]
    public void Per_thread_run_time_switches_and_max_delay_agree_with_perf_sched()
    {
        // perf on this VM drops switches silently when the machine is loaded (the other test assemblies run beside
        // this one in CI): with a fifth of the switch chains broken, half the threads' maximum delays moved by a
        // repaired switch-in was seen once in three CI runs, and two such captures in a row once (stop 60: 20,358
        // broken chains, 2 of 4 maxima apart). Such a capture is taken again, up to three in all; every check is the
        // same on the last one.
        for (var attempt = 1; attempt < Attempts; attempt++)
        {
            if (CaptureAndCompare(lastAttempt: false)) return;
        }
        CaptureAndCompare(lastAttempt: true);
    }

    private const int Attempts = 3;

    /// <summary>How far a maximum ready latency may move on a capture with broken switch chains.</summary>
    private const double BrokenChainDelayTolerance = 0.02;

    /// <returns>False (first attempt only) when the capture's switch chains are broken and the maximum delays of half
    /// the threads or more disagree with perf sched: the capture is then retried.</returns>
    private bool CaptureAndCompare(bool lastAttempt)
    {
        using var dir = new TempDirectory("tracelab-perfdata");
        var stealBefore = HostSteal.TotalNs();
        var (perfData, workload) = PerfRecord.TimeMutex(dir.Path, "mutex", "20000", SyscallSet.Lock);
        var steal = HostSteal.TotalNs() - stealBefore;
        var report = TraceAnalysis.Analyze(perfData, workload, pid: workload.Pid);
        var perf = PerfSchedOracle.From(perfData);

        Assert.Equal("perf", report.Capture.Backend);
        _output.WriteLine($"{report.Capture.Events:N0} events, lost {report.Capture.LostEvents}");
        // perf on this VM drops sched_switch samples without a LOST record when the CPUs go idle (perf script shows
        // per-CPU switch chains that do not connect: prev_pid ≠ the previous switch's next_pid). perf sched then counts
        // the idle time before a missing switch-in as run time, TraceLab repairs to the last evidence
        // (docs/metrics.md#chain-break-repair), so run time and perf sched latency's switch counts can only be compared
        // on an intact chain. Switch-ins, max
        // delay and the getrusage total are compared always.
        var intact = report.Capture.ChainBreaksInRegion == 0;
        _output.WriteLine(intact
            ? "switch chains intact: run time compared with perf sched timehist"
            : $"{report.Capture.ChainBreaksInRegion:N0} broken switch chains (perf dropped samples silently): run time "
                + $"compared with getrusage only");
        var failures = new List<string>();
        var maxDelayAgree = 0;
        foreach (var wt in workload.Threads)
        {
            var ours = report.Threads.Single(t => t.Tid == wt.Tid);
            Assert.True(perf.Timehist.TryGetValue(wt.Tid, out var th), $"perf sched timehist has no row for {wt.Tid}");
            Assert.True(perf.Latency.TryGetValue(wt.Tid, out var lat), $"perf sched latency has no row for {wt.Tid}");
            var exitSlice = perf.ExitSliceNs.GetValueOrDefault(wt.Tid);
            var switches = ours.VoluntarySwitches + ours.InvoluntarySwitches;
            _output.WriteLine($"tid {wt.Tid}: run {ours.RunNs} ns vs timehist {th.RunNs} + exit slice {exitSlice}; "
                + $"switches {switches} vs sched-in {th.SchedIns}, latency switches {lat.Switches}; "
                + $"max delay {ours.ReadyLatency.MaxNs} vs {lat.MaxDelayNs}");
            if (intact) PerfSchedOracle.Check(failures, $"{wt.Tid} run time", ours.RunNs, th.RunNs + exitSlice, 1000);
            // timehist counts sched-ins it could attribute; the exit switch (prev_state X) is not a switch in our
            // counts either.
            PerfSchedOracle.Check(failures, $"{wt.Tid} switches vs timehist sched-in", switches, th.SchedIns, 0);
            // perf sched latency counts every switch-out, including the final one at exit.
            if (intact) PerfSchedOracle.Check(
                failures, $"{wt.Tid} switches vs latency", switches + (exitSlice > 0 ? 1 : 0), lat.Switches, 0);
            // Both: from the wakeup (sched_waking) or preemption to the switch-in; perf prints it in ms with 3
            // decimals. A dropped switch-in moves one side's maximum (TraceLab ends the wait at the repaired start,
            // perf at the
            // next switch-in it saw): on a broken chain a thread may disagree (seen: 915,787 vs 424,000 ns, 1 run in
            // 4), but most must agree. The repairs also move maxima a little: with a fifth of the chains broken in a
            // quiet full run, 1,512,571 vs 1,487,000 ns (1.7 %) beside one 504 µs apart, so a broken capture is
            // judged at 2 %, an intact one at the oracle's 0.5 %.
            var delayTolerance = intact ? PerfSchedOracle.Tolerance : BrokenChainDelayTolerance;
            if (Math.Abs(ours.ReadyLatency.MaxNs - lat.MaxDelayNs) <= Math.Max(
                500, delayTolerance * lat.MaxDelayNs)) maxDelayAgree++;
            else if (intact) failures.Add(
                $"{wt.Tid} max ready latency: TraceLab {ours.ReadyLatency.MaxNs:N0}, perf {lat.MaxDelayNs:N0}");
        }

        if (!lastAttempt && !intact && 2 * maxDelayAgree <= workload.Threads.Count)
        {
            _output.WriteLine(
                $"max delay agrees for {maxDelayAgree} of {workload.Threads.Count} on broken chains: capturing again");
            return false;
        }
        Assert.True(2 * maxDelayAgree > workload.Threads.Count,
            $"max ready latency agrees with perf sched for only {maxDelayAgree} of {workload.Threads.Count} threads");

        // getrusage is tick-sampled on some kernels: compare process totals, as the tracefs capture tests do.
        var rusage = workload.Process.UserNs + workload.Process.SystemNs;
        var traced = report.Threads.Where(t => workload.Threads.Any(w => w.Tid == t.Tid) || t.Tid == workload.Pid)
            .Sum(t => t.RunNs);
        // A repaired start counts the time from the last evidence to the unlogged switch-in as run (an upper bound,
        // docs/metrics.md#chain-break-repair): with perf dropping switches, the upper margin grows with the share of
        // broken chains: 29 k of ~160 k switches broken (18 %) made 1.49 s against 1.27 s getrusage (+17 %) once on a
        // loaded machine; 15,647 breaks (over 15 %) made +32 % beside the other test assemblies. A capture with more
        // than 15 % broken is taken again; the last is judged with 0.15 + its own broken share.
        var switchesInRegion = Math.Max(1L, report.Threads.Sum(t => t.VoluntarySwitches + t.InvoluntarySwitches));
        var brokenShare = (double)report.Capture.ChainBreaksInRegion / switchesInRegion;
        if (!lastAttempt && brokenShare > 0.15)
        {
            _output.WriteLine($"traced run {traced} ns vs getrusage {rusage} ns with {brokenShare:P1} of the switches "
                + "broken: capturing again");
            return false;
        }
        var repairSlack = brokenShare;
        // The lower bound: on an intact capture 0.85 of getrusage. When perf dropped switches the run slices between
        // them are in no record at all, and neither reader can count them: 641 broken chains (0.7 % of the switches)
        // hid 26 % of getrusage's CPU time in a full run (a build beside it), TraceLab's total equal to perf sched
        // timehist's within 0.7 %. Such a capture is judged against what perf sched itself reads from the file.
        var timehistRun = workload.Threads.Select(w => w.Tid).Append(workload.Pid).Distinct()
            .Sum(tid => perf.Timehist.TryGetValue(tid, out var th) ? th.RunNs : 0);
        var lower = intact ? rusage * 0.85 : Math.Min(rusage * 0.85, timehistRun * 0.98);
        _output.WriteLine($"traced run {traced} ns vs getrusage {rusage} ns (upper margin {0.15 + repairSlack:P1}, "
            + $"steal {steal} ns), perf sched timehist {timehistRun} ns; lower bound {lower:F0} ns");
        // Above getrusage, also the time the hypervisor took the vCPUs away during the run (steal): inside a traced
        // interval, never charged to the task (docs/testing.md#rusage-steal-allowance), as the tracefs tests allow. A
        // busy host once made both readers of the file see far more run time than getrusage: TraceLab 0.49 s, perf
        // sched timehist 0.57 s, getrusage 0.30 s.
        Assert.InRange(traced, lower, rusage * (1.15 + repairSlack) + steal);
        Assert.True(failures.Count == 0, string.Join("\n", failures));
        return true;
    }

    [PerfFact]
    public void Lost_events_are_reported_when_perf_buffers_overflow()
    {
        using var dir = new TempDirectory("tracelab-perfdata-lost");
        // A two-page per-CPU buffer with every syscall recorded overflows on this workload even on an idle machine
        // (eight pages did only under load).
        var (perfData, workload) = PerfRecord.TimeMutex(dir.Path, "mutex", "20000", SyscallSet.All, mmapPages: "2");
        var report = TraceAnalysis.Analyze(perfData, workload, pid: workload.Pid);
        var (lostSamples, lostRecords) = PerfRecord.Lost(perfData);
        _output.WriteLine($"lost: ours {report.Capture.LostEvents}; perf: Total Lost Samples {lostSamples}, "
            + $"PERF_RECORD_LOST total {lostRecords}");
        Assert.True(lostSamples > 0, "the small buffers were expected to overflow");
        // Both perf counts measure the same drops (the kernel's LOST records, and the per-event lost counters perf
        // record writes as LOST_SAMPLES); TraceLab takes the larger per CPU, so it lies between the larger total and
        // the sum.
        Assert.InRange(report.Capture.LostEvents, Math.Max(lostSamples, lostRecords), lostSamples + lostRecords);
    }

}

/// <summary>
/// Records a workload scenario with `perf record -a` and the same tracepoints a tracefs capture enables.
/// </summary>
public static class PerfRecord
{
    public static IEnumerable<string> Events(SyscallSet set) =>
        CaptureEventSet.For(set).Where(e => e != "sched/sched_process_exec").Select(e => e.Replace('/', ':'));

    /// <param name="mmapPages">perf record -m: per-CPU buffer (pages or size); large by default so nothing is
    /// lost.</param>
    public static (string PerfData, WorkloadResult Workload) TimeMutex(
        string dir, string scenario, string iterations, SyscallSet set, string mmapPages = "16M")
    {
        var def = WorkloadCatalog.All.Single(w => w.Name == "timemutex");
        var values =
            def.Resolve(def.FindScenario(scenario)!, new Dictionary<string, string> { ["iterations"] = iterations });
        var exe = new NativeWorkloadBuilder(RepoPaths.Root).EnsureBuilt("timemutex");
        var perfData = Path.Combine(dir, "capture.perf.data");
        var result = Path.Combine(dir, "workload.json");
        var args = new List<string> { "record", "-q", "-m", mmapPages, "-o", perfData, "-a", "-e",
            string.Join(',', Events(set)), "--", exe, "--result", result };
        args.AddRange(def.Arguments(values));
        var (code, _, err) = ProcessOutput.Run("perf", [.. args]);
        if (code != 0) throw new InvalidOperationException($"perf record exited {code}: {err}");
        return (perfData, WorkloadResult.Parse(File.ReadAllText(result), result));
    }

    /// <summary>
    /// perf's "Total Lost Samples" (perf report header) and the sum of its PERF_RECORD_LOST lines (perf script).
    /// </summary>
    public static (long Samples, long Records) Lost(string perfData)
    {
        long samples = 0, records = 0;
        foreach (var line in ProcessOutput.Lines("perf", "report", "-i", perfData, "--stdio"))
            samples += Number(line, "# Total Lost Samples:");
        foreach (var line in ProcessOutput.Lines(
            "perf", "script", "-i", perfData, "--show-lost-events", "-F", "cpu,time,event"))
        {
            var at = line.IndexOf("PERF_RECORD_LOST lost ", StringComparison.Ordinal);
            if (at >= 0) records += long.Parse(line[(at + "PERF_RECORD_LOST lost ".Length)..].Trim(),
                System.Globalization.CultureInfo.InvariantCulture);
        }

        return (samples, records);
    }

    private static long Number(string line, string prefix) =>
        line.StartsWith(prefix, StringComparison.Ordinal)
            ? long.Parse(line[prefix.Length..].Trim(), System.Globalization.CultureInfo.InvariantCulture) : 0;
}
