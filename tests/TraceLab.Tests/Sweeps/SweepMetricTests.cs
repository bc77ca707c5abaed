using TraceLab.Reporting;
using TraceLab.Reporting.Sections;
using TraceLab.Sweeps;

namespace TraceLab.Tests.Sweeps;

/// <summary>
/// The per-run numbers sweeps take from a report and from a workload result, against hand-computed values.
/// </summary>
public sealed class SweepMetricTests
{
    private static LatencySection NoLatency => new() { Count = 0 };

    private static ThreadSection Thread(int tid, string role, long vol, long invol, long readyNs, long iterations) =>
        new()
        {
            Tid = tid,
            Name = "t",
            Role = role,
            VoluntarySwitches = vol,
            InvoluntarySwitches = invol,
            ReadyNs =
            readyNs,
            RunNs = 2_000_000,
            Migrations = 1,
            ReadyLatency = NoLatency,
            Workload =
            role == "main" ? null : new WorkloadThreadSection { Iterations = iterations },
        };

    [Fact]
    public void Traced_metrics_average_over_workers_and_sum_the_analyses()
    {
        var report = new RunReport
        {
            Capture = new CaptureSection { Backend = "tracefs", TraceFile = "x" },
            Region = new RegionSection { Source = "markers" },
            Threads =
            [
                Thread(10, "main", 100, 100, 0, 0),
                Thread(11, "worker 0", 4, 1, 3_000_000, 1000),
                Thread(12, "worker 1", 8, 5, 1_000_000, 1000),
            ],
            Kernel = new KernelSection
            {
                Captured = true,
                Threads =
                [
                    new KernelThreadSection { Tid = 10, Name = "t", SyscallCalls = 999 },
                    new KernelThreadSection { Tid = 11, Name = "t", SyscallCalls = 1500 },
                    new KernelThreadSection { Tid = 12, Name = "t", SyscallCalls = 500 },
                ],
            },
            Wakeups = new WakeupSection
            {
                Threads =
                [
                    new WakeupThreadSection { Tid = 11, Name = "t", Wakeups = 10, Futile = 2,
                        SameCpuLatency = NoLatency, CrossCpuLatency = NoLatency },
                    new WakeupThreadSection { Tid = 12, Name = "t", Wakeups = 30, Futile = 6,
                        SameCpuLatency = NoLatency, CrossCpuLatency = NoLatency },
                ],
            },
            Smp = new SmpSection
            {
                Cpus = [new SmpCpuSection { Cpu = 0, IdleNs = 1_500_000 },
                    new SmpCpuSection { Cpu = 1, IdleNs = 500_000 }],
                Threads = [new SmpThreadSection { Tid = 11, Name = "t", RunnableWhileIdleNs = 250_000 }],
                Totals = new SmpTotalsSection { WakeupsReceivedCrossCpu = 17 },
            },
        };
        var m = TracedMetrics.From(report);
        Assert.Equal(3, m["involPerThread"]);          // (1 + 5) / 2, the main thread left out
        Assert.Equal(6, m["volPerThread"]);            // (4 + 8) / 2
        Assert.Equal(2, m["readyMsPerThread"]);        // (3 + 1) ms / 2
        Assert.Equal(2, m["migrations"]);
        Assert.Equal(1, m["syscallsPerIteration"]);    // (1500 + 500) / (1000 + 1000)
        Assert.Equal(8, m["futileWakeups"]);
        Assert.Equal(0.2, m["futileShare"], 12);       // 8 / 40
        Assert.Equal(17, m["crossCpuWakeups"]);
        Assert.Equal(2, m["idleCpuMs"]);
        Assert.Equal(0.25, m["runnableWhileIdleMs"]);
        Assert.False(m.ContainsKey("handoffs"));       // no convoy section, no number
    }

    [Fact]
    public void Workload_metrics_read_the_metrics_object_and_per_thread_iterations()
    {
        const string json = """
            {"workload":"sendrecv","metrics":{"receiveCount":12,"itemsPerReceive":2.5,"note":"x"},
             "threads":[{"index":0,"iterations":12},{"index":1,"iterations":100},{"index":2,"iterations":200}]}
            """;
        var m = WorkloadMetrics.Read(json);
        Assert.Equal(12, m["receiveCount"]);
        Assert.Equal(2.5, m["itemsPerReceive"]);
        Assert.False(m.ContainsKey("note"));
        Assert.Equal(100, m["thread1.iterations"]);
        Assert.Equal(312, m["iterations"]);
    }

    [Fact]
    public void Per_role_metrics_sum_each_roles_own_thread_counts()
    {
        // sendrecv's shape: three senders and the receiver, each with its own getrusage(RUSAGE_THREAD) counts.
        const string json = """
            {"workload":"sendrecv","process":{"voluntarySwitches":1000,"involuntarySwitches":1000},
             "metrics":{"receiveCount":4},
             "threads":[
              {"index":0,"role":"sender 0","voluntarySwitches":10,"involuntarySwitches":2,"iterations":100},
              {"index":1,"role":"sender 1","voluntarySwitches":20,"involuntarySwitches":3,"iterations":200},
              {"index":2,"role":"sender 2","voluntarySwitches":30,"involuntarySwitches":5,"iterations":300},
              {"index":3,"role":"receiver","voluntarySwitches":7,"involuntarySwitches":1,"iterations":4}]}
            """;
        var m = WorkloadMetrics.Read(json);
        Assert.Equal(7, m["receiver.vol"]);
        Assert.Equal(1, m["receiver.invol"]);
        Assert.Equal(8, m["receiver.switches"]);
        Assert.Equal(2, m["receiver.switchesPerIteration"]);   // 8 switches / 4 receives
        Assert.Equal(60, m["sender.vol"]);
        Assert.Equal(10, m["sender.invol"]);
        Assert.Equal(70, m["sender.switches"]);
        Assert.Equal(600, m["sender.iterations"]);
        Assert.Equal(70 / 600.0, m["sender.switchesPerIteration"], 12);
    }

    [Fact]
    public void Per_role_metrics_need_two_roles_and_known_counts()
    {
        // One role (timemutex's workers): nothing to tell apart.
        var workers = WorkloadMetrics.Read("""
            {"threads":[{"index":0,"role":"worker 0","voluntarySwitches":1,"involuntarySwitches":1,"iterations":5},
                        {"index":1,"role":"worker 1","voluntarySwitches":1,"involuntarySwitches":1,"iterations":5}]}
            """);
        Assert.DoesNotContain(workers.Keys, k => k.StartsWith("worker", StringComparison.Ordinal));
        // A sender whose counts were unavailable (-1): no switch figures for the senders, the receiver's still there.
        var partial = WorkloadMetrics.Read("""
            {"threads":[{"index":0,"role":"sender 0","voluntarySwitches":-1,"involuntarySwitches":-1,"iterations":5},
                        {"index":1,"role":"receiver","voluntarySwitches":3,"involuntarySwitches":0,"iterations":3}]}
            """);
        Assert.False(partial.ContainsKey("sender.switches"));
        Assert.Equal(5, partial["sender.iterations"]);
        Assert.Equal(3, partial["receiver.switches"]);
        Assert.Equal("sender", WorkloadMetrics.RoleGroup("sender 12"));
        Assert.Equal("receiver", WorkloadMetrics.RoleGroup("receiver"));
    }

    [Fact]
    public void Results_without_a_metrics_object_still_load()
    {
        var m = WorkloadMetrics.Read("""{"workload":"timemutex","threads":[]}""");
        Assert.Equal(0, m["iterations"]);
        Assert.Single(m);
    }

    [Fact]
    public void Metric_names_map_to_run_fields_in_seconds_and_counts()
    {
        var run = new SweepRunRecord
        {
            ElapsedNs = 1_500_000_000,
            UserNs = 250_000_000,
            SystemNs = 0,
            VoluntarySwitches = 3,
            InvoluntarySwitches = 4
        };
        run.Metrics["receiveCount"] = 9;
        run.Traced["involPerThread"] = 2;
        Assert.Equal(1.5, SweepMetrics.Value(run, "elapsed"));
        Assert.Equal(0.25, SweepMetrics.Value(run, "user"));
        Assert.Equal(7, SweepMetrics.Value(run, "switches"));
        Assert.Equal(9, SweepMetrics.Value(run, "receiveCount"));
        Assert.Equal(2, SweepMetrics.Value(run, "traced.involPerThread"));
        Assert.Null(SweepMetrics.Value(run, "traced.handoffs"));
    }
}
