using TraceLab.Analyzers;
using TraceLab.Analyzers.Smp;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Analyzers;

public sealed class SmpAnalyzerTests
{
    private const int A = 100, B = 200, C = 300, D = 400, E = 500, W = 600, X = 700, Y = 800;
    private const long S = TaskState.Interruptible, R = TaskState.Running;

    private static (ThreadAccounting Accounting, SmpAnalyzer Smp) Run(params KernelEvent[] events)
    {
        var accounting = new ThreadAccounting();
        var smp = new SmpAnalyzer(accounting);
        var pass = new AnalysisPass(accounting, smp);
        var last = long.MinValue;
        foreach (var e in events)
        {
            if (e.Timestamp < last) throw new InvalidOperationException($"test script out of order at {e}");
            last = e.Timestamp;
            pass.OnEvent(e);
        }
        pass.Complete();
        return (accounting, smp);
    }

    /// <summary>An event logged by the idle task, e.g. the sched_wakeup it logs after leaving idle.</summary>
    private static KernelEvent IdleEvidence(long ts, int cpu) => new()
    {
        Timestamp = ts,
        Cpu = cpu,
        CurrentTid = 0,
        Kind = KernelEventKind.Other,
    };

    /// <summary>
    /// Two CPUs, no markers (region = whole trace, closed at the last event, 9500).
    /// cpu0: A 1000..2000, C 2000..4000, idle 4000..5600, B 5600..7000, C 7000..9000, idle 9000..9500.
    /// cpu1: B 1000..3000, A 3000..8000, idle 8000..8500, B 8500..9500.
    /// </summary>
    private static readonly KernelEvent[] Migrating =
    [
        KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
        KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
        KernelEvent.Switch(2000, 0, A, 120, R, C, 120),     // A preempted: runnable 2000..3000, both CPUs busy
        KernelEvent.Migrate(2500, 1, B, A, 0, 1),           // logged migration of A
        KernelEvent.Switch(3000, 1, B, 120, S, A, 120),     // A now on cpu1: a CPU change
        KernelEvent.Switch(4000, 0, C, 120, S, 0, 120),
        KernelEvent.Waking(5000, 1, A, B, 0),               // cross-CPU: logged on cpu1, target cpu0 (idle)
        KernelEvent.Switch(5600, 0, 0, 120, R, B, 120),     // B on cpu0 with no migrate event: a CPU change
        KernelEvent.Waking(6000, 0, B, C, 0),               // same-CPU
        KernelEvent.Switch(7000, 0, B, 120, R, C, 120),     // B preempted: runnable 7000..8500
        KernelEvent.Switch(8000, 1, A, 120, S, 0, 120),     // cpu1 idle 8000..8500
        KernelEvent.Switch(8500, 1, 0, 120, R, B, 120),     // B back on cpu1: a CPU change
        KernelEvent.Switch(9000, 0, C, 120, S, 0, 120),
        KernelEvent.Switch(9500, 1, B, 120, S, 0, 120),
    ];

    [Fact]
    public void Residency_per_cpu_follows_threads_across_cpus_and_sums_to_run_time()
    {
        var (acc, smp) = Run(Migrating);

        Assert.Equal([2000 - 1000, 8000 - 3000], smp.Threads[A].ResidencyNs);
        Assert.Equal([7000 - 5600, (3000 - 1000) + (9500 - 8500)], smp.Threads[B].ResidencyNs);
        Assert.Equal([(4000 - 2000) + (9000 - 7000)], smp.Threads[C].ResidencyNs);
        Assert.Equal(0, smp.Threads[C].ResidencyOn(1));
        foreach (var tid in new[] { A, B, C })
            Assert.Equal(acc.Threads[tid].RunNs, smp.Threads[tid].TotalResidencyNs);
        Assert.False(smp.Threads.ContainsKey(0));
    }

    /// <summary>
    /// ETW logs ReadyThread before the readied thread's own CSwitch: A is readied at 2000 while still running and
    /// switches out (with a wait reason) at 2100, so it is runnable from then, not blocked; cpu1 idles the whole time,
    /// so all 900 ns until A runs again at 3000 are runnable-while-idle — the same state the accounting's ready time
    /// uses (the SMP analysis once kept its own state machine and called this time blocked).
    /// </summary>
    [Fact]
    public void Etw_thread_readied_before_its_own_switch_out_is_runnable_while_a_cpu_idles()
    {
        var (acc, smp) = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, B, 120, S, 0, 120, prevWaitReason: 6),
            KernelEvent.Switch(1000, 2, 0, 120, R, C, 120),
            KernelEvent.Waking(2000, 2, C, A, 0),
            KernelEvent.Switch(2100, 0, A, 120, S, 0, 120, prevWaitReason: 6),
            KernelEvent.Switch(3000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(4000, 0, A, 120, S, 0, 120, prevWaitReason: 6),
            KernelEvent.Switch(4000, 2, C, 120, S, 0, 120, prevWaitReason: 6));

        Assert.Equal(3000 - 2100, acc.Threads[A].ReadyNs);
        Assert.Equal(3000 - 2100, smp.Threads[A].RunnableWhileIdleNs);
        Assert.Equal(acc.Threads[A].RunNs, smp.Threads[A].TotalResidencyNs);
    }

    [Fact]
    public void Cpu_busy_idle_and_switches_cover_the_known_time()
    {
        var (_, smp) = Run(Migrating);

        Assert.Equal(2, smp.Cpus.Count);
        var cpu0 = smp.Cpus[0];
        Assert.Equal((4000 - 1000) + (9000 - 5600), cpu0.BusyNs);   // 3000 + 3400
        Assert.Equal((5600 - 4000) + (9500 - 9000), cpu0.IdleNs);   // 1600 + 500
        Assert.Equal(6, cpu0.Switches);                              // 1000, 2000, 4000, 5600, 7000, 9000
        var cpu1 = smp.Cpus[1];
        Assert.Equal((8000 - 1000) + (9500 - 8500), cpu1.BusyNs);   // 7000 + 1000
        Assert.Equal(8500 - 8000, cpu1.IdleNs);
        Assert.Equal(5, cpu1.Switches);                              // 1000, 3000, 8000, 8500, 9500
        Assert.All(smp.Cpus, c => Assert.Equal(9500 - 1000, c.BusyNs + c.IdleNs));
        Assert.All(smp.Cpus, c => Assert.True(c.Seen));
    }

    [Fact]
    public void Migrations_count_logged_events_and_cpu_changes_count_every_move()
    {
        var (_, smp) = Run(Migrating);

        Assert.Equal(1, smp.Threads[A].Migrations);   // the migrate event at 2500
        Assert.Equal(1, smp.Threads[A].CpuChanges);   // cpu0 -> cpu1 at 3000
        Assert.Equal(0, smp.Threads[B].Migrations);   // never logged
        Assert.Equal(2, smp.Threads[B].CpuChanges);   // cpu1 -> cpu0 at 5600, cpu0 -> cpu1 at 8500
        Assert.Equal(0, smp.Threads[C].CpuChanges);   // cpu0 only

        Assert.Equal(new SmpTotals(Migrations: 1, CpuChanges: 3, WakeupsReceived: 2, WakeupsReceivedCrossCpu: 1,
            WakeupsGivenCrossCpu: 1), smp.Totals([A, B, C, C, 12345]));
        Assert.Equal(new SmpTotals(0, 0, 1, 0, 0), smp.Totals([C]));
    }

    [Fact]
    public void Runnable_while_idle_counts_only_the_part_of_a_runnable_interval_with_an_idle_cpu()
    {
        var (_, smp) = Run(Migrating);

        Assert.Equal(0, smp.Threads[A].RunnableWhileIdleNs);   // preempted 2000..3000, C and B busy throughout
        // Woken 5000..5600 with cpu0 idle throughout (600); preempted 7000..8500, cpu1 idle only 8000..8500 (500).
        Assert.Equal(600 + 500, smp.Threads[B].RunnableWhileIdleNs);
        Assert.Equal(0, smp.Threads[C].RunnableWhileIdleNs);   // woken 6000..7000, B and A busy
    }

    [Fact]
    public void Wakeups_split_by_cpu_and_givers_exclude_interrupt_and_idle_context()
    {
        var (acc, smp) = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
            KernelEvent.Waking(2000, 0, A, C, 0),                                        // A -> C same
            KernelEvent.Waking(2100, 0, A, D, 1),                                        // A -> D cross
            KernelEvent.Waking(2200, 1, B, C, 0).WithFlags(EventFlags.HardIrq),          // irq -> C cross
            KernelEvent.Waking(2300, 1, B, D, 1).WithFlags(EventFlags.SoftIrq),          // irq -> D same
                                                                                         // B (thread context) -> C
                                                                                         // cross
            KernelEvent.Waking(2400, 1, B, C, 0).WithFlags(EventFlags.IrqsOff),
            KernelEvent.Switch(3000, 1, B, 120, S, 0, 120),
            KernelEvent.Waking(3500, 1, 0, B, 0),                                        // idle task -> B cross
            KernelEvent.WakeupNew(4000, 0, A, E, 1),                                     // new thread: not a wakeup
            KernelEvent.Switch(5000, 0, A, 120, S, 0, 120));

        var a = smp.Threads[A];
        Assert.Equal((1, 1), (a.WakeupsGivenSameCpu, a.WakeupsGivenCrossCpu));
        var b = smp.Threads[B];
        Assert.Equal((0, 1), (b.WakeupsGivenSameCpu, b.WakeupsGivenCrossCpu));
        Assert.Equal((0, 1), (b.WakeupsReceivedSameCpu, b.WakeupsReceivedCrossCpu));
        var c = smp.Threads[C];
        Assert.Equal((1, 2), (c.WakeupsReceivedSameCpu, c.WakeupsReceivedCrossCpu));
        var d = smp.Threads[D];
        Assert.Equal((1, 1), (d.WakeupsReceivedSameCpu, d.WakeupsReceivedCrossCpu));
        var e = smp.Threads[E];
        Assert.Equal((0, 0), (e.WakeupsReceivedSameCpu, e.WakeupsReceivedCrossCpu));

        // Same + cross is every wakeup ThreadAccounting counts.
        foreach (var tid in new[] { B, C, D, E })
        {
            var s = smp.Threads[tid];
            Assert.Equal(acc.Threads[tid].WakeupsReceived, s.WakeupsReceivedSameCpu + s.WakeupsReceivedCrossCpu);
        }
        Assert.Equal(0, acc.ChainBreaks);   // interrupt-context events name the interrupted thread: no break
    }

    /// <summary>
    /// cpu0: A 1000..4000, C 4000..5500, A 5500..7000, B 7000..9000. cpu1: B 1000..3000, idle 3000..6000,
    /// C 6000..8000, idle 8000..8200, A 8200..9000. Last event 9000.
    /// </summary>
    [Fact]
    public void Runnable_while_the_other_cpu_is_idle_counts_and_while_it_is_busy_does_not()
    {
        var (_, smp) = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
            KernelEvent.Waking(2000, 0, A, C, 0),             // C runnable from 2000
            KernelEvent.Switch(3000, 1, B, 120, S, 0, 120),   // cpu1 idle from 3000
            KernelEvent.Switch(4000, 0, A, 120, S, C, 120),   // C: 2000..4000, idle part 3000..4000
            KernelEvent.Waking(5000, 0, C, A, 0),             // A runnable from 5000, cpu1 idle
            KernelEvent.Switch(5500, 0, C, 120, R, A, 120),   // A: 5000..5500 all idle; C preempted, cpu1 idle
            KernelEvent.Switch(6000, 1, 0, 120, R, C, 120),   // C: 5500..6000 all idle
            KernelEvent.Waking(6500, 0, A, B, 0),             // B runnable from 6500, both CPUs busy
            KernelEvent.Switch(7000, 0, A, 120, R, B, 120),   // B: 6500..7000 busy; A preempted, both busy
            KernelEvent.Switch(8000, 1, C, 120, S, 0, 120),   // cpu1 idle from 8000
            KernelEvent.Switch(8200, 1, 0, 120, R, A, 120),   // A: 7000..8200, idle part 8000..8200
            KernelEvent.Switch(9000, 0, B, 120, S, 0, 120),
            KernelEvent.Switch(9000, 1, A, 120, S, 0, 120));

        Assert.Equal((4000 - 3000) + (6000 - 5500), smp.Threads[C].RunnableWhileIdleNs);
        Assert.Equal((5500 - 5000) + (8200 - 8000), smp.Threads[A].RunnableWhileIdleNs);
        Assert.Equal(0, smp.Threads[B].RunnableWhileIdleNs);
        Assert.Equal(1, smp.Threads[A].CpuChanges);   // cpu0 -> cpu1 at 8200
        Assert.Equal(1, smp.Threads[C].CpuChanges);   // cpu0 -> cpu1 at 6000
    }

    [Fact]
    public void Cpus_whose_task_is_unknown_or_never_seen_are_not_idle()
    {
        // cpu0 busy with A throughout; cpu1 never logs anything; cpu2's first event (idle, at 2000) makes it known.
        // B is runnable 1500..2600; only 2000..2600 has a known idle CPU.
        var (_, smp) = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Waking(1500, 0, A, B, 0),
            IdleEvidence(2000, 2),
            KernelEvent.Switch(2600, 0, A, 120, S, B, 120),
            KernelEvent.Switch(3000, 0, B, 120, S, 0, 120));

        Assert.Equal(2600 - 2000, smp.Threads[B].RunnableWhileIdleNs);
        Assert.Equal(3, smp.Cpus.Count);
        Assert.False(smp.Cpus[1].Seen);
        Assert.Equal((0, 0), (smp.Cpus[1].BusyNs, smp.Cpus[1].IdleNs));
        Assert.Equal((0, 3000 - 2000), (smp.Cpus[2].BusyNs, smp.Cpus[2].IdleNs));   // known from its first event
        Assert.Equal((3000 - 1000, 0), (smp.Cpus[0].BusyNs, smp.Cpus[0].IdleNs));
    }

    /// <summary>
    /// cpu1 never logs its switch out of idle: Y is woken (from cpu0) at <paramref name="waking"/> targeting idle cpu1,
    /// the idle task logs on cpu1 at <paramref name="idleSeen"/>, Y's own syscall on cpu1 at 3000 is the first sign of
    /// it there. Y started at max(idleSeen, waking), exactly as ThreadAccounting repairs it.
    /// </summary>
    [Theory]
    [InlineData(2800, 2500)]   // the idle task logged after the wakeup (it left idle for Y)
    [InlineData(2400, 2600)]   // last idle evidence before the wakeup: Y cannot have started before it was woken
    [InlineData(2500, 2500)]
    public void Missing_idle_to_task_switch_is_repaired_from_the_threads_own_event(long idleSeen, long waking)
    {
        var start = Math.Max(idleSeen, waking);
        var events = new List<KernelEvent>
        {
            KernelEvent.Switch(1000, 0, 0, 120, R, Y, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, X, 120),
            KernelEvent.Switch(1500, 0, Y, 120, S, W, 120),
            KernelEvent.Switch(2000, 1, X, 120, S, 0, 120),
            KernelEvent.Waking(waking, 0, W, Y, 1),
            IdleEvidence(idleSeen, 1),
            SyscallBy(3000, 1, Y),                            // no switch named Y on cpu1
            KernelEvent.Switch(4000, 1, Y, 120, S, 0, 120),
            KernelEvent.Switch(5000, 0, W, 120, S, 0, 120),
        };
        events.Sort((p, q) => p.Timestamp.CompareTo(q.Timestamp));
        var (acc, smp) = Run([.. events]);

        var y = smp.Threads[Y];
        Assert.Equal([1500 - 1000, 4000 - start], y.ResidencyNs);
        Assert.Equal(acc.Threads[Y].RunNs, y.TotalResidencyNs);
        Assert.Equal(1, y.CpuChanges);                        // last ran on cpu0, repaired start on cpu1
        Assert.Equal(0, y.Migrations);
        // Runnable waking..start with cpu1 idle. The idle set changes only when the syscall at 3000 reveals Y, but the
        // interval ends at the estimated start, so start..3000 is not counted.
        Assert.Equal(start - waking, y.RunnableWhileIdleNs);
        Assert.Equal((0, 1), (y.WakeupsReceivedSameCpu, y.WakeupsReceivedCrossCpu));
        Assert.Equal(1, smp.Threads[W].WakeupsGivenCrossCpu);

        var cpu1 = smp.Cpus[1];
        Assert.Equal((2000 - 1000) + (4000 - start), cpu1.BusyNs);   // X, then Y from its estimated start
        Assert.Equal((start - 2000) + (5000 - 4000), cpu1.IdleNs);
        Assert.Equal(3, cpu1.Switches);                               // 1000, 2000, 4000 were logged
        Assert.Equal((5000 - 1000, 0), (smp.Cpus[0].BusyNs, smp.Cpus[0].IdleNs));
    }

    [Fact]
    public void Own_event_on_another_cpu_ends_the_unlogged_run_on_the_old_one()
    {
        // A runs on cpu0 from 1000, last seen there at 2000; its switch-out is lost. cpu1 is idle (last seen 2500);
        // A's syscall on cpu1 at 3000 shows it there: it started at 2500 (cpu1's last idle evidence), its cpu0 run
        // ended at its last sighting there (2000), and cpu0's task is unknown from then on.
        var (acc, smp) = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, X, 120, S, 0, 120),
            SyscallBy(2000, 0, A),
            IdleEvidence(2500, 1),
            SyscallBy(3000, 1, A),
            KernelEvent.Switch(4000, 1, A, 120, S, 0, 120));

        Assert.Equal([2000 - 1000, 4000 - 2500], smp.Threads[A].ResidencyNs);
        Assert.Equal(acc.Threads[A].RunNs, smp.Threads[A].TotalResidencyNs);
        Assert.Equal(1, smp.Threads[A].CpuChanges);
        Assert.Equal((2000 - 1000, 0), (smp.Cpus[0].BusyNs, smp.Cpus[0].IdleNs));
        Assert.Equal((4000 - 2500, 2500 - 1000), (smp.Cpus[1].BusyNs, smp.Cpus[1].IdleNs));
    }

    [Fact]
    public void Lost_switch_out_ends_residency_at_the_last_sighting_and_counts_a_cpu_change()
    {
        // A runs on cpu0 from 1000, last seen there at 2000; its switch-out is lost; cpu1 switches to it at 3000.
        // cpu0 is unknown from 2000 until the idle task's event at 3500, which dates idle back to its last evidence.
        var (acc, smp) = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            SyscallBy(2000, 0, A),
            KernelEvent.Switch(2500, 1, 0, 120, R, W, 120),
            KernelEvent.Switch(3000, 1, W, 120, S, A, 120),
            IdleEvidence(3500, 0),
            KernelEvent.Switch(4000, 1, A, 120, S, 0, 120));

        Assert.Equal([2000 - 1000, 4000 - 3000], smp.Threads[A].ResidencyNs);
        Assert.Equal(acc.Threads[A].RunNs, smp.Threads[A].TotalResidencyNs);
        Assert.Equal(1, smp.Threads[A].CpuChanges);
        Assert.Equal((2000 - 1000, 4000 - 2000), (smp.Cpus[0].BusyNs, smp.Cpus[0].IdleNs));
        Assert.Equal((4000 - 2500, 0), (smp.Cpus[1].BusyNs, smp.Cpus[1].IdleNs));
    }

    /// <summary>
    /// Region = [2500, 6000] (markers by A then B, on cpu0).
    /// cpu0: A 1000..5000, B 5000..8000. cpu1: B 1000..1500, idle 1500..3000, B 3000..4000, idle 4000..7000, A
    /// 7000..8000.
    /// </summary>
    [Fact]
    public void Region_markers_clip_durations_and_limit_counts()
    {
        var (_, smp) = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
            KernelEvent.Migrate(1200, 0, A, B, 0, 1),                           // before BEGIN
            KernelEvent.Switch(1500, 1, B, 120, S, 0, 120),
            KernelEvent.Waking(2000, 0, A, B, 1),                               // before BEGIN; B runnable, cpu1 idle
            SyscallBy(2200, 0, A),                                              // idle time 2000..2200 must not leak in
            KernelEvent.Marker(2500, 0, A, MeasuredRegion.BeginMarker),
            // B runnable 2000..3000, clipped 2500..3000
            KernelEvent.Switch(3000, 1, 0, 120, R, B, 120),
            KernelEvent.Migrate(3500, 0, A, B, 1, 0),                           // counted
            KernelEvent.Switch(4000, 1, B, 120, S, 0, 120),
            KernelEvent.Waking(4500, 0, A, B, 0),                               // same-CPU, counted
                                                                                // B: cpu1 -> cpu0; A preempted, cpu1
                                                                                // idle
            KernelEvent.Switch(5000, 0, A, 120, R, B, 120),
            KernelEvent.Marker(6000, 0, B, MeasuredRegion.EndMarker),
            // A: runnable 5000..7000, clipped 5000..6000
            KernelEvent.Switch(7000, 1, 0, 120, R, A, 120),
            KernelEvent.Migrate(7200, 1, A, B, 0, 1),                           // after END
            KernelEvent.Waking(7500, 1, A, C, 0),                               // after END
            KernelEvent.Switch(8000, 0, B, 120, S, 0, 120),
            KernelEvent.Switch(8000, 1, A, 120, S, 0, 120));

        var a = smp.Threads[A];
        var b = smp.Threads[B];
        Assert.Equal([5000 - 2500], a.ResidencyNs);                     // 7000..8000 on cpu1 is after END
        Assert.Equal([6000 - 5000, 4000 - 3000], b.ResidencyNs);
        Assert.Equal(1, b.Migrations);
        Assert.Equal(1, b.CpuChanges);                                  // 5000
        Assert.Equal(0, a.CpuChanges);                                  // 7000 is after END
        Assert.Equal((3000 - 2500) + (5000 - 4500), b.RunnableWhileIdleNs);
        Assert.Equal(6000 - 5000, a.RunnableWhileIdleNs);
        Assert.Equal((1, 0), (b.WakeupsReceivedSameCpu, b.WakeupsReceivedCrossCpu));
        Assert.Equal((1, 0), (a.WakeupsGivenSameCpu, a.WakeupsGivenCrossCpu));
        Assert.Equal((0, 0), (smp.Threads[C].WakeupsReceivedSameCpu, smp.Threads[C].WakeupsReceivedCrossCpu));

        Assert.Equal((6000 - 2500, 0, 1), (smp.Cpus[0].BusyNs, smp.Cpus[0].IdleNs, smp.Cpus[0].Switches));
        // cpu1: idle 2500..3000, B 3000..4000, idle 4000..6000; switches at 3000 and 4000.
        Assert.Equal((4000 - 3000, (3000 - 2500) + (6000 - 4000), 2),
            (smp.Cpus[1].BusyNs, smp.Cpus[1].IdleNs, smp.Cpus[1].Switches));
    }

    [Fact]
    public void Threads_pinned_to_one_cpu_never_migrate_or_wake_across_cpus()
    {
        // Everything on cpu0: A and B hand off, B preempted once, a timer interrupt wakes A while cpu0 idles.
        var (acc, smp) = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Waking(1500, 0, A, B, 0),
            KernelEvent.Switch(2000, 0, A, 120, S, B, 120),
            KernelEvent.Waking(2500, 0, B, A, 0),
            KernelEvent.Switch(3000, 0, B, 120, R, A, 120),
            KernelEvent.Switch(3500, 0, A, 120, S, B, 120),
            KernelEvent.Switch(4000, 0, B, 120, S, 0, 120),
            KernelEvent.Waking(4500, 0, 0, A, 0).WithFlags(EventFlags.HardIrq),
            KernelEvent.Switch(4800, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(5000, 0, A, 120, S, 0, 120));

        Assert.Equal(new SmpTotals(Migrations: 0, CpuChanges: 0, WakeupsReceived: 3, WakeupsReceivedCrossCpu: 0,
            WakeupsGivenCrossCpu: 0), smp.Totals([A, B]));
        foreach (var s in smp.Threads.Values)
        {
            Assert.Equal((0, 0, 0, 0), (s.Migrations, s.CpuChanges, s.WakeupsReceivedCrossCpu, s.WakeupsGivenCrossCpu));
            Assert.Equal(acc.Threads[s.Tid].RunNs, Assert.Single(s.ResidencyNs));
        }
        Assert.Equal((2, 1), (smp.Threads[A].WakeupsReceivedSameCpu, smp.Threads[B].WakeupsReceivedSameCpu));
        // Only A's wakeup from idle (4500..4800) finds an idle CPU; every other runnable interval has cpu0 busy.
        Assert.Equal(4800 - 4500, smp.Threads[A].RunnableWhileIdleNs);
        Assert.Equal(0, smp.Threads[B].RunnableWhileIdleNs);
        Assert.Single(smp.Cpus);
    }
}
