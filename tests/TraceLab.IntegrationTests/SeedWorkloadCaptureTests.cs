using System.Globalization;
using TraceLab.Reporting;
using TraceLab.Reporting.Waits;
using TraceLab.Workloads;

namespace TraceLab.IntegrationTests;

/// <summary>
/// Short real captures of the throttle (seed 001), sendrecv (seed 003) and thrdperf (seed 004) workloads, each checked
/// against an independent figure: the closed-form sum, the workload's own getrusage and counts, and the lengths it
/// slept.
/// </summary>
public sealed class SeedWorkloadCaptureTests
{
    private readonly ITestOutputHelper _output;

    public SeedWorkloadCaptureTests(ITestOutputHelper output) => _output = output;

    private static WorkloadResult Workload(Capture.Result run) =>
        WorkloadResult.Parse(File.ReadAllText(Path.Combine(run.Directory, "workload.json")), "workload.json");

    [TracingFact]
    public void Throttle_sums_correctly_and_its_traced_run_time_matches_getrusage_per_thread()
    {
        const long threads = 4, chunk = 6_000_000;
        var stealBefore = HostSteal.TotalNs();
        using var run =
            Capture.Trace("throttle", "unthrottled", ("threads", "4"), ("chunk", "6000000"), ("repeat", "20"));
        // Above getrusage, the run's steal time (docs/testing.md#rusage-steal-allowance).
        var steal = HostSteal.TotalNs() - stealBefore;
        var w = Workload(run);

        // Independent of the workload: 1 + 2 + ... + n = n(n+1)/2, exact in a double below 2^53.
        const long n = threads * chunk;
        Assert.Equal(n * (n + 1) / 2.0, w.Metrics["sum"]);
        Assert.Equal(1, w.Metrics["sumOk"]);
        Assert.Equal(0, w.Metrics["activeLimit"]);
        Assert.Equal("markers", run.Report.Region.Source);

        // CPU-bound threads: the trace's run time is their CPU time. getrusage may be tick-sampled (4 ms at HZ=250),
        // hence the absolute allowance on top of the relative one.
        var failures = new List<string>();
        foreach (var t in w.Threads)
        {
            var reported = Assert.Single(run.Report.Threads, r => r.Tid == t.Tid);
            Assert.Equal($"worker {t.Index}", reported.Role);
            var rusage = t.UserNs + t.SystemNs;
            // Below getrusage also 3 µs per switch: the scheduler path the kernel charges outside the traced
            // intervals under CPU contention (docs/testing.md#rusage-switch-allowance).
            var below = (reported.VoluntarySwitches + reported.InvoluntarySwitches) * 3_000L;
            var tolerance = Math.Max(0.2 * rusage, 12_000_000) + (reported.RunNs < rusage ? below : steal);
            _output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"tid {t.Tid}: traced run {reported.RunNs / 1e6:0.0} ms, getrusage {rusage / 1e6:0.0} ms"));
            if (Math.Abs(reported.RunNs - rusage) > tolerance)
                failures.Add($"tid {t.Tid}: traced run {reported.RunNs} ns vs getrusage {rusage} ns");
        }
        Assert.True(failures.Count == 0, string.Join("\n", failures));
        var p = run.Report.Process!;
        var processRusage = p.UserNs!.Value + p.SystemNs!.Value;
        Assert.InRange(p.TracedRunNs,
            processRusage * 0.85 - (p.VoluntarySwitches + p.InvoluntarySwitches) * 3_000L,
            processRusage * 1.15 + steal);
        Assert.Equal(1, p.WorkloadMetrics!["sumOk"]);
    }

    [TracingFact]
    public void SendRecv_event_inside_lock_starves_the_receiver_on_the_lock_and_lock_free_senders_never_block()
    {
        using var inside = Capture.Trace("sendrecv", "event-inside-lock", ("duration-ms", "1000"));
        using var lockFree = Capture.Trace("sendrecv", "lock-free", ("duration-ms", "1000"));
        var wi = Workload(inside);
        var wf = Workload(lockFree);

        // Nothing published was lost (the workload exits 6 otherwise), and the counts add up.
        foreach (var w in new[] { wi, wf })
        {
            Assert.Equal(w.Metrics["sendCount"],
                w.Threads.Where(t => t.Role!.StartsWith("sender", StringComparison.Ordinal)).Sum(t => t.Iterations));
            Assert.Equal(w.Metrics["sendCount"], w.Metrics["itemsConsumed"] + w.Metrics["itemsLeft"]);
        }

        // SR1: the receiver does far fewer iterations than a sender ...
        var receiver = Assert.Single(wi.Threads, t => t.Role == "receiver");
        var senderMax = wi.Threads.Where(t => t.Role != "receiver").Max(t => t.Iterations);
        Assert.True(receiver.Iterations < senderMax, $"receiver {receiver.Iterations} vs busiest sender {senderMax}");
        Assert.Equal(receiver.Iterations, wi.Metrics["receiveCount"]);

        // ... because, woken while the sender still holds the lock, it blocks on that lock: the trace shows the lock
        // (found by the futex address the workload reported) with blocking waits and the receiver among its waiters.
        var lockAddress = Assert.Single(wi.Objects, o => o.Name == "lock").Address;
        // A private futex: named with the workload's pid (docs/metrics.md#lock-classification).
        var lockName = $"futex {lockAddress} (pid {wi.Pid})";
        var lockObject = inside.Report.Convoys!.Objects.SingleOrDefault(o => o.Object == lockName);
        Assert.True(lockObject is not null, $"{lockName} not among the lock objects ["
            + string.Join(", ", inside.Report.Convoys.Objects.Select(o => o.Object)) + "]; left out as not a lock: "
            + $"{inside.Report.Convoys.EventObjects}; receiver's waits by class: "
            + string.Join(", ", (inside.Report.SectionOf(AnalysisReports.Of<WaitsReport>()) as WaitsSection)?.Threads
                .FirstOrDefault(t => t.Tid == receiver.Tid)?.Ns ?? []));
        Assert.True(lockObject.BlockingWaits > 0, "no blocking waits on the lock");
        Assert.Contains(receiver.Tid, lockObject.Participants);
        var reportedReceiver = Assert.Single(inside.Report.Threads, t => t.Tid == receiver.Tid);
        Assert.Equal("receiver", reportedReceiver.Role);
        Assert.True(reportedReceiver.VoluntarySwitches > 0);

        // SR3: without the lock the senders never sleep; with it they block on it many times.
        long SenderVoluntary(Capture.Result r, WorkloadResult w) => r.Report.Threads
            .Where(t => w.Threads.Any(x => x.Tid == t.Tid && x.Role!.StartsWith("sender", StringComparison.Ordinal)))
            .Sum(t => t.VoluntarySwitches);
        var vi = SenderVoluntary(inside, wi);
        var vf = SenderVoluntary(lockFree, wf);
        _output.WriteLine($"sender voluntary switches: event-inside-lock {vi}, lock-free {vf}; "
            + $"receive counts {wi.Metrics["receiveCount"]} / {wf.Metrics["receiveCount"]}");
        Assert.True(vi >= 20, $"event-inside-lock senders blocked only {vi} times");
        Assert.True(vf * 5 < vi, $"lock-free senders {vf} vs event-inside-lock {vi} voluntary switches");
    }

    [TracingFact]
    public void ThrdPerf_io_bound_computations_finish_sooner_concurrently_and_each_sleeps_its_length()
    {
        using var serial = Capture.Trace("thrdperf", "io-serial", ("bias", "20"));
        using var concurrent = Capture.Trace("thrdperf", "io-concurrent", ("bias", "20"));
        var ws = Workload(serial);
        var wc = Workload(concurrent);

        foreach (var w in new[] { ws, wc })
        {
            // Lengths are bias x (n..1), longest first; the seed's elapsed and response follow from start/finish.
            Assert.Equal([100L, 80, 60, 40, 20], w.Computations.Select(c => c.LengthMs));
            Assert.Equal(w.Computations.Max(c => c.FinishNs) / 1e6, w.Metrics["elapsedMs"], 3);
            foreach (var c in w.Computations)
            {
                Assert.Equal(c.FinishNs, c.TurnaroundNs);
                Assert.Equal(c.TurnaroundNs / (c.LengthMs * 1e6), c.ResponseRatio, 6);
                Assert.True(c.FinishNs - c.StartNs >= c.LengthMs * 1_000_000,
                    $"computation {c.Index} finished before its sleep ended");
            }
            Assert.Equal(w.Computations.Average(c => c.ResponseRatio), w.Metrics["averageResponse"], 6);
        }

        // Serial: each computation starts after the previous one ended, so elapsed is at least the sum of lengths.
        for (var i = 1; i < ws.Computations.Count; i++)
            Assert.True(ws.Computations[i].StartNs >= ws.Computations[i - 1].FinishNs);
        Assert.True(ws.Metrics["elapsedMs"] >= 300);

        // TP2: concurrently the sleeps overlap.
        _output.WriteLine($"io elapsed: serial {ws.Metrics["elapsedMs"]} ms, concurrent {wc.Metrics["elapsedMs"]} ms");
        Assert.True(wc.Metrics["elapsedMs"] < ws.Metrics["elapsedMs"],
            $"concurrent {wc.Metrics["elapsedMs"]} ms vs serial {ws.Metrics["elapsedMs"]} ms");

        // The trace agrees: each computation thread was blocked at least as long as it slept.
        foreach (var c in wc.Computations)
        {
            var t = Assert.Single(concurrent.Report.Threads, r => r.Tid == c.Tid);
            Assert.Equal($"computation {c.Index}", t.Role);
            Assert.True(t.WaitNs >= c.LengthMs * 1_000_000 * 0.95,
                $"computation {c.Index}: traced wait {t.WaitNs} ns < {c.LengthMs} ms");
        }
    }
}
