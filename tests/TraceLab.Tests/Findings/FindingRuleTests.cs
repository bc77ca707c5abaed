using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Locks;
using TraceLab.Reporting;
using TraceLab.Reporting.Findings;
using TraceLab.Reporting.Sections;

namespace TraceLab.Tests.Findings;

/// <summary>
/// Each rule's thresholds and severity on hand-built reports and evidence (docs/metrics.md#findings).
/// </summary>
public sealed class FindingRuleTests
{
    private const long Ms = 1_000_000;
    private const int A = 11, B = 12, C = 13, D = 14, Other = 99;
    private const string Sem = "sysv-sem 3";
    private static readonly LockObject Futex = new(LockObjectKind.Futex, 0x40);

    private static LatencySection Lat(long count = 0, long p50 = 0) => new() { Count = count, P50Ns = p50 };

    /// <summary>Four threads of 100 ms each (T = 400 ms) over a 100-ms region on 2 CPUs.</summary>
    private static RunReport Report(long runMs = 50) => new()
    {
        Capture = new CaptureSection { Backend = "test", TraceFile = "t", Cpus = 2, SwitchEvents = 40 },
        Region = new RegionSection { Source = "markers", BeginNs = 0, EndNs = 100 * Ms },
        Threads = [.. new[] { A, B, C, D }.Select(tid => new ThreadSection
        {
            Tid = tid, Name = "w", RunNs = runMs * Ms, ReadyNs = (100 - runMs) / 2 * Ms,
                WaitNs = (100 - runMs) / 2 * Ms, ReadyLatency = Lat(),
        })],
    };

    private static List<FindingSection> Run(RunReport report, FindingEvidence? evidence, IFindingRule rule) =>
        FindingEngine.Run(report, evidence, [rule]);

    private static ConvoySection Convoys(params LockObjectSection[] objects) => new()
    {
        ObjectSource = "syscalls",
        Objects = [.. objects],
        Threads = [.. new[] { A, B, C, D }.Select(tid => new ConvoyThreadSection
        {
            Tid = tid, Name = "w", TimeInConvoyNs = tid is A or B ? 60 * Ms : 0, QueueWait = Lat(),
                ReadyLatency = Lat(),
        })],
    };

    private static LockObjectSection Object(string name, string kind, long episodes, long? acquisitions = null) => new()
    {
        Object = name,
        Kind = kind,
        Episodes = episodes,
        HandoffsInConvoys = episodes * 10,
        LongestChain = 10,
        Acquisitions = acquisitions,
        Participants = [A, B],
        HandoffGap = Lat(),
        QueueWait = Lat(),
    };

    [Fact]
    public void Convoy_severity_is_the_participants_convoy_time_less_what_a_cause_explains()
    {
        var report = Report();
        report = With(report, convoys: Convoys(Object(Futex.ToString(), "Futex", episodes: 2)));
        var f = Assert.Single(Run(report, null, new LockConvoyRule()));
        Assert.Equal(0.3, f.Severity);                                  // (60 + 60) / 400
        Assert.Equal([A, B], f.Threads);

        var evidence = new FindingEvidence
        {
            Objects = { [Futex] = new ObjectEvidence { Object = Futex,
            WaitBehindDescheduledNs = { [A] = 40 * Ms, [Other] = 500 * Ms } } }
        };
        Assert.Equal(0.2, Assert.Single(Run(report, evidence, new LockConvoyRule())).Severity);   // (120 − 40) / 400

        var noEpisodes = With(Report(), convoys: Convoys(Object(Futex.ToString(), "Futex", episodes: 0)));
        Assert.Empty(Run(noEpisodes, null, new LockConvoyRule()));
    }

    [Fact]
    public void A_convoy_of_one_episode_is_titled_in_the_singular()
    {
        var one = With(Report(), convoys: Convoys(Object(Futex.ToString(), "Futex", episodes: 1)));
        var f = Assert.Single(Run(one, null, new LockConvoyRule()));
        Assert.Contains(": 10 handoffs through the wait queue in 1 episode (longest chain 10)", f.Title);
    }

    [Fact]
    public void Kernel_lock_needs_visible_acquisitions_and_captured_syscalls()
    {
        var kernel = new KernelSection
        {
            Captured = true,
            Threads = [new KernelThreadSection { Tid = A, Name = "w",
                Syscalls = [new SyscallSection { Name = "semtimedop", Calls = 200, CpuNs = 30 * Ms,
                    ReadyNs = 10 * Ms }] }],
        };
        var report = With(Report(), convoys: Convoys(Object(Sem, "SysVSemaphore", 0, acquisitions: 100)),
            kernel: kernel);
        var f = Assert.Single(Run(report, null, new KernelLockRule()));
        Assert.Equal(0.1, f.Severity);                                  // (30 + 10) / 400
        Assert.Equal([Sem], f.Objects);

        Assert.Empty(Run(With(Report(), convoys: Convoys(Object(Sem, "SysVSemaphore", 0, acquisitions: 99)),
            kernel: kernel), null, new KernelLockRule()));
        Assert.Empty(Run(With(Report(), convoys: Convoys(Object(Futex.ToString(), "Futex", 0)), kernel: kernel), null,
            new KernelLockRule()));
        Assert.Empty(Run(With(Report(), convoys: Convoys(Object(Sem, "SysVSemaphore", 0, acquisitions: 100)),
            kernel: new KernelSection { Captured = false }), null, new KernelLockRule()));
    }

    [Fact]
    public void Yield_while_holding_counts_holders_and_waiters_of_the_reported_threads_only()
    {
        var o = new ObjectEvidence
        {
            Object = Futex,
            DeschedulesWhileHolding = 7,
            HolderDescheduledNs = { [A] = 20 * Ms, [Other] = 100 * Ms },
            WaitBehindDescheduledNs = { [B] = 40 * Ms },
        };
        var f = Assert.Single(Run(Report(), new FindingEvidence { Objects = { [Futex] = o } },
            new YieldWhileHoldingRule()));
        Assert.Equal(0.15, f.Severity);                                 // (20 + 40) / 400
        Assert.Equal([A, B], f.Threads);
        Assert.Equal(["TM6"], f.Claims);
        o.DeschedulesWhileHolding = 0;
        Assert.Empty(Run(Report(), new FindingEvidence { Objects = { [Futex] = o } }, new YieldWhileHoldingRule()));
    }

    [Fact]
    public void Wake_while_holding_needs_ten_cycles_or_ten_wake_preemptions()
    {
        var o = new ObjectEvidence
        {
            Object = Futex,
            WakeWhileHoldingCycles = { [D] = 9 },
            WakeWhileHoldingNs = { [D] = 20 * Ms },
            WakeWhileHoldingWakers = { A },
            HolderWakePreemptedNs = { [A] = 10 * Ms },
            WaitBehindWakePreemptedNs = { [B] = 10 * Ms },
        };
        var evidence = new FindingEvidence { Objects = { [Futex] = o } };
        Assert.Empty(Run(Report(), evidence, new WakeWhileHoldingRule()));
        o.WakeWhileHoldingCycles[D] = 10;
        var f = Assert.Single(Run(Report(), evidence, new WakeWhileHoldingRule()));
        Assert.Equal(0.1, f.Severity);                                  // (20 + 10 + 10) / 400
        Assert.Equal([A, B, D], f.Threads);
        Assert.Contains("w (14)", f.Title);
    }

    /// <summary>
    /// glibc parks a condition variable's waiters on two futex words 4 bytes apart; a lock built on one (CPython's GIL)
    /// splits its waits between them. B and C wait 30 ms on each word: 30 % of their time on either alone (under the
    /// rule's half), 60 % on the pair, which is one gate. The same waits on words 8 bytes apart stay two objects.
    /// </summary>
    [Fact]
    public void Serialization_judges_a_condition_variables_two_futex_words_as_one_gate()
    {
        const int Process = 100;
        ObjectEvidence Half(long id) => new()
        {
            Object = new LockObject(LockObjectKind.Futex, id, Process),
            BlockedNs = { [B] = 30 * Ms, [C] = 30 * Ms },
            BlockingWaits = 2,
            Releasers = [A, B],
        };
        FindingEvidence E(params ObjectEvidence[] objects)
        {
            var e = new FindingEvidence();
            foreach (var o in objects) e.Objects[o.Object] = o;
            return e;
        }
        var f = Assert.Single(Run(Report(), E(Half(0x48), Half(0x4c)), new SerializationRule()));
        Assert.Equal(0.3, f.Severity);                                  // (60 + 60) / 400
        Assert.Equal(2, f.Objects.Count);
        Assert.Contains("with 0x4c (a condition variable)", f.Title);
        Assert.Equal(0.6, f.Evidence.Single(e => e.Metric == "findings.evidence.waitersBlockedShare").Value);
        Assert.Empty(Run(Report(), E(Half(0x48)), new SerializationRule()));
        Assert.Empty(Run(Report(), E(Half(0x48), Half(0x50)), new SerializationRule()));
    }

    [Fact]
    public void Serialization_is_a_long_wait_most_threads_pass_one_at_a_time_without_convoys()
    {
        ObjectEvidence Gate(long meanMs, params int[] releasers) => new()
        {
            Object = Futex,
            BlockedNs = { [B] = 60 * Ms, [C] = 60 * Ms },
            BlockingWaits = 120 / meanMs,
            Releasers = [.. releasers],
        };
        FindingEvidence E(ObjectEvidence o) => new() { Objects = { [Futex] = o } };
        var f = Assert.Single(Run(Report(), E(Gate(30, A, B)), new SerializationRule()));
        Assert.Equal(0.3, f.Severity);                                  // (60 + 60) / 400
        Assert.Equal(0.6, f.Evidence.Single(e => e.Metric == "findings.evidence.waitersBlockedShare").Value);
        Assert.Empty(Run(Report(), E(Gate(30, A)), new SerializationRule()));           // one releaser: a barrier
        var shortWaits = Gate(30, A, B);
        shortWaits.BlockingWaits = 200;                                 // 0.6-ms waits: handoff costs
        Assert.Empty(Run(Report(), E(shortWaits), new SerializationRule()));
        var briefly = Gate(30, A, B);
        briefly.BlockedNs[B] = briefly.BlockedNs[C] = 20 * Ms;          // 20 % of their time: not a gate
        Assert.Empty(Run(Report(), E(briefly), new SerializationRule()));
        var convoy = With(Report(), convoys: Convoys(Object(Futex.ToString(), "Futex", episodes: 1)));
        Assert.Empty(Run(convoy, E(Gate(30, A, B)), new SerializationRule()));
        var one = Gate(30, A, B);
        one.BlockedNs.Remove(C);                                        // 1 of 4 threads: not "everything waits on it"
        Assert.Empty(Run(Report(), E(one), new SerializationRule()));
    }

    [Fact]
    public void Oversubscription_needs_as_much_waiting_after_preemptions_as_running_and_more_demand_than_cpus()
    {
        // Each thread: 50 ms running, 50 ms runnable after preemptions: 30 behind another reported thread, 20 behind
        // another process; a wake preemption is not in readyByPreemptor at all.
        FindingEvidence E(params int[] tids) => new()
        {
            Threads = tids.ToDictionary(t => t, t => new ThreadEvidence
            {
                Tid = t,
                Preemptions = 5,
                WakePreemptions = 1,
                PreemptedReadyNs = 60 * Ms,
                ReadyByPreemptor = { [C] = 30 * Ms, [Other] = 20 * Ms },
            }),
        };
        var f = Assert.Single(Run(Report(), E(A, B, C, D), new OversubscriptionRule()));
        Assert.Equal(0.5, f.Severity);                                  // 4 × 50 / 400
        Assert.Equal(4, f.Evidence.Single(e => e.Metric == "findings.evidence.cpuDemand").Value);   // (200 + 200) / 100
        Assert.Equal(120 * Ms,
            f.Evidence.Single(e => e.Metric == "findings.evidence.readyByPreemptor (reported preemptors)").Value);
        Assert.Contains("(60 % of it behind the process's own threads)", f.Title);
        Assert.Empty(Run(Report(runMs: 70), E(A, B, C, D), new OversubscriptionRule()));   // 50 < 70 ms running
        Assert.Empty(Run(Report(), E(A, B), new OversubscriptionRule()));               // demand 2 < 1.5 × 2 CPUs
        var idle = With(Report(), smp: new SmpSection
        {
            Cpus = [new SmpCpuSection { Cpu = 0, BusyNs = 80 * Ms, IdleNs = 20 * Ms }],
            Totals = new SmpTotalsSection(),
        });
        Assert.Empty(Run(idle, E(A, B, C, D), new OversubscriptionRule()));             // 20 % idle: placement
    }

    /// <summary>
    /// Process 10's four threads (20 ms running, 40 runnable, 40 blocked each) on 2 CPUs busy 196 of 200 ms, 116 ms of
    /// it running other processes (two `yes` and the capture itself).
    /// </summary>
    private static RunReport Contended(long othersMs = 100, long idleMs = 4, bool target = true, long runMs = 20)
    {
        var r = Report(runMs);
        return new RunReport
        {
            Capture = r.Capture,
            Region = r.Region,
            Threads = r.Threads,
            Process = target ? new ProcessSection { Pid = 10, Name = "server" } : null,
            Processes =
            [
                new ProcessSummary { Pid = 10, Name = "server", RunNs = 80 * Ms, Target = true },
                new ProcessSummary { Pid = 20, Name = "yes", RunNs = othersMs * 6 / 10 * Ms },
                new ProcessSummary { Pid = 21, Name = "yes", RunNs = othersMs * 4 / 10 * Ms },
            ],
            Self = new SelfCostSection { Pids = [30, 31], RunNs = 16 * Ms },
            Smp = new SmpSection
            {
                Cpus =
                [
                    new SmpCpuSection { Cpu = 0, BusyNs = 98 * Ms, IdleNs = idleMs / 2 * Ms },
                    new SmpCpuSection { Cpu = 1, BusyNs = 98 * Ms, IdleNs = idleMs / 2 * Ms },
                ],
                Totals = new SmpTotalsSection(),
            },
        };
    }

    [Fact]
    public void Cpu_contention_charges_the_runnable_time_to_other_processes_by_their_share_of_the_busy_cpus()
    {
        var f = Assert.Single(Run(Contended(), null, new CpuContentionRule()));
        // 160 ms runnable × 116 / 196 of the busy time = 94.69 ms of the 400 ms of thread time.
        Assert.Equal(0.2367, f.Severity);
        Assert.Equal(160 * Ms, f.Evidence.Single(e => e.Metric == "threads[].readyNs").Value);
        Assert.Equal(116 * Ms,
            f.Evidence.Single(e => e.Metric == "processes[].runNs (other processes, self and excluded)").Value);
        Assert.Equal("CPU contention: 4 threads of server waited 160 ms for a CPU, 2.0× their 80 ms of running, on 2 " +
            "CPUs busy 98 % of the time, 59 % of it running other processes: yes (pid 20) 60 ms, yes (pid 21) 40 ms, " +
            "tracelab (this capture, pid 30, 31) 16 ms", f.Title);
        Assert.Equal([A, B, C, D], f.Threads);

        Assert.Empty(Run(Contended(othersMs: 70), null, new CpuContentionRule()));   // 86 / 196: the process's own
        Assert.Empty(Run(Contended(idleMs: 30), null, new CpuContentionRule()));     // 13 % idle: placement, not CPUs
        Assert.Empty(Run(Contended(target: false), null, new CpuContentionRule()));  // a system report: no "others"
        Assert.Empty(Run(Contended(runMs: 45), null, new CpuContentionRule()));       // 110 < 180 ms running
    }

    [Fact]
    public void Cpu_contention_leaves_a_process_with_more_threads_than_cpus_to_oversubscription()
    {
        // Each thread 40 ms runnable after preemptions: demand (80 + 160) / 100 = 2.4 < 3 (1.5 × 2 CPUs) is contention;
        // 70 ms each makes (80 + 280) / 100 = 3.6, the process's own oversubscription.
        FindingEvidence E(long readyMs) => new()
        {
            Threads = new[] { A, B, C, D }.ToDictionary(t => t, t => new ThreadEvidence
            {
                Tid = t,
                Preemptions = 5,
                PreemptedReadyNs = readyMs * Ms,
                ReadyByPreemptor = { [Other] = readyMs * Ms },
            }),
        };
        Assert.Single(Run(Contended(), E(40), new CpuContentionRule()));
        Assert.Empty(Run(Contended(), E(70), new CpuContentionRule()));
        Assert.Single(Run(Contended(), E(70), new OversubscriptionRule()));
    }

    [Fact]
    public void Cross_cpu_wakeups_cost_the_median_difference_per_cross_cpu_wakeup()
    {
        var report = With(Report(), wakeups: new WakeupSection
        {
            Threads = [new WakeupThreadSection { Tid = A, Name = "w", SameCpuLatency = Lat(100, 5_000),
                CrossCpuLatency = Lat(1000, 25_000) },
                       new WakeupThreadSection { Tid = B, Name = "w", SameCpuLatency = Lat(9, 5_000),
                           CrossCpuLatency = Lat(1000, 25_000) }],
        });
        var f = Assert.Single(Run(report, null, new CrossCpuWakeupRule()));
        Assert.Equal(0.05, f.Severity);                                 // 1000 × 20 µs / 400 ms; B has too few samples
        Assert.Equal([A], f.Threads);
        Assert.Empty(f.Windows);
    }

    [Fact]
    public void Priority_preemption_needs_ten_preemptions_by_higher_priorities()
    {
        FindingEvidence E(long n) => new()
        {
            Threads = { [A] = new ThreadEvidence { Tid = A,
            HigherPriorityPreemptions = n, HigherPriorityReadyNs = 80 * Ms } }
        };
        Assert.Equal(0.2, Assert.Single(Run(Report(), E(10), new PriorityPreemptionRule())).Severity);
        Assert.Empty(Run(Report(), E(9), new PriorityPreemptionRule()));
    }

    [Fact]
    public void The_engine_drops_findings_below_the_floor_and_ranks_the_rest()
    {
        var evidence = new FindingEvidence
        {
            Threads = { [A] = new ThreadEvidence { Tid = A, HigherPriorityPreemptions = 10,
                HigherPriorityReadyNs = 19 * Ms } },
            Objects = { [Futex] = new ObjectEvidence { Object = Futex, DeschedulesWhileHolding = 1,
                HolderDescheduledNs = { [A] = 100 * Ms } } },
        };
        var findings = FindingEngine.Run(Report(), evidence);
        Assert.Equal(["yield-while-holding"], findings.Select(f => f.Kind));  // priority: 19/400 < 5 %
        evidence.Threads[A].HigherPriorityReadyNs = 200 * Ms;
        Assert.Equal(["priority-preemption", "yield-while-holding"], FindingEngine.Run(Report(),
            evidence).Select(f => f.Kind));
        Assert.Empty(FindingEngine.Run(Report(), new FindingEvidence()));
        var empty = Report();
        empty.Threads.Clear();
        Assert.Empty(FindingEngine.Run(empty, evidence));
    }

    [Fact]
    public void Report_md_opens_with_the_findings_or_says_there_are_none()
    {
        var report = Report();
        report.Findings = [];
        var md = ReportMarkdown.Render(report);
        Assert.Contains("No findings above the floor (5 % of the reported threads' time)", md);
        Assert.DoesNotContain("can be judged", md);
        Assert.True(md.IndexOf("## Findings", StringComparison.Ordinal) < md.IndexOf("| ", StringComparison.Ordinal));
        report.Findings = FindingEngine.Run(report, new FindingEvidence
        {
            Objects = { [Futex] = new ObjectEvidence { Object = Futex, DeschedulesWhileHolding = 1,
                HolderDescheduledNs = { [A] = 100 * Ms } } },
        });
        md = ReportMarkdown.Render(report);
        Assert.Contains("### 1. Yield or sleep while holding futex 0x40", md);
        Assert.Contains("— 25 %", md);
        Assert.Contains("`findings.evidence.holderDescheduledNs` = 100,000,000", md);
    }

    private static RunReport With(RunReport r, ConvoySection? convoys = null, KernelSection? kernel = null,
        WakeupSection? wakeups = null, SmpSection? smp = null) => new()
        {
            Capture = r.Capture,
            Region = r.Region,
            Threads = r.Threads,
            Convoys = convoys ?? r.Convoys,
            Kernel = kernel ?? r.Kernel,
            Wakeups = wakeups ?? r.Wakeups,
            Smp = smp ?? r.Smp,
        };
}
