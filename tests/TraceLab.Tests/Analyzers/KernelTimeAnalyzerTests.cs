using TraceLab.Analyzers;
using TraceLab.Analyzers.Kernel;
using TraceLab.Core;
using TraceLab.Core.Syscalls;
using TraceLab.Reporting;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>Syscall windows split into on-CPU, blocked and runnable time, on hand-built traces.</summary>
public sealed class KernelTimeAnalyzerTests
{
    private const int A = 11, B = 12;

    /// <summary>
    /// A: futex wait 100 → 270: on CPU 100-130 and 250-270 (50), blocked 130-200 (70, until B wakes it), runnable
    /// 200-250 (50). Then semtimedop 300 → 380, preempted 320-360: on CPU 40, runnable 40.
    /// </summary>
    private static KernelEvent[] TwoSyscalls() =>
    [
        KernelEvent.Switch(0, 0, 0, 120, R, A, 120),
        Futex(100, A, 0x10, FutexWait),
        KernelEvent.Switch(130, 0, A, 120, S, B, 120),
        KernelEvent.Waking(200, 0, B, A, 0),
        KernelEvent.Switch(250, 0, B, 120, R, A, 120),
        FutexDone(270, A),
        Semop(300, A, 5),
        KernelEvent.Switch(320, 0, A, 120, R, B, 120),
        KernelEvent.Switch(360, 0, B, 120, R, A, 120),
        SemopDone(380, A),
    ];

    [Fact]
    public void Syscall_time_splits_into_cpu_blocked_and_ready()
    {
        var k = Run(a => new KernelTimeAnalyzer(a), TwoSyscalls());
        var a = k.Threads[A];
        var futex = a.BySyscall[LinuxSyscalls.Futex];
        Assert.Equal("futex", futex.Name);
        Assert.Equal((1, 170, 50, 70, 50), (futex.Calls, futex.TotalNs, futex.CpuNs, futex.BlockedNs, futex.ReadyNs));
        var sem = a.BySyscall[LinuxSyscalls.Semtimedop];
        Assert.Equal((1, 80, 40, 0, 40), (sem.Calls, sem.TotalNs, sem.CpuNs, sem.BlockedNs, sem.ReadyNs));
        Assert.Equal((2, 250, 90, 70, 90), (a.Calls, a.SyscallNs, a.KernelCpuNs, a.BlockedNs, a.ReadyNs));
        Assert.True(k.SawSyscalls);
        Assert.Equal(0, k.BoundaryNs);            // one exit → enter gap (270 → 300): too few to estimate
    }

    [Fact]
    public void Threads_sharing_and_changing_cpus_keep_their_own_syscalls()
    {
        // A enters on CPU 0 and is preempted there by B, which makes its own syscall on CPU 0 while A finishes on
        // CPU 1: the analyzer's per-CPU memory of the last thread must not mix them up.
        // A: semtimedop 100 → 170, on CPU 100-120 and 150-170 (40), runnable 120-150 (30); then 200 → 210 (10).
        // B: futex 130 → 180 and 220 → 225, on CPU throughout (55). Gaps: A 170 → 200 on CPU 1, B 180 → 220 on CPU 0.
        const int Cpu0 = 0, Cpu1 = 1;
        var k = Run(a => new KernelTimeAnalyzer(a),
            KernelEvent.Switch(0, Cpu0, 0, 120, R, A, 120),
            Enter(100, Cpu0, A, LinuxSyscalls.Semtimedop, 5),
            KernelEvent.Switch(120, Cpu0, A, 120, R, B, 120),
            Enter(130, Cpu0, B, LinuxSyscalls.Futex, 0x10, FutexWait),
            KernelEvent.Switch(150, Cpu1, 0, 120, R, A, 120),
            Exit(170, Cpu1, A, LinuxSyscalls.Semtimedop),
            Exit(180, Cpu0, B, LinuxSyscalls.Futex),
            Enter(200, Cpu1, A, LinuxSyscalls.Semtimedop, 5),
            Exit(210, Cpu1, A, LinuxSyscalls.Semtimedop),
            Enter(220, Cpu0, B, LinuxSyscalls.Futex, 0x10, FutexWait),
            Exit(225, Cpu0, B, LinuxSyscalls.Futex));
        var a = k.Threads[A];
        Assert.Equal((2, 80, 50, 0, 30), (a.Calls, a.SyscallNs, a.KernelCpuNs, a.BlockedNs, a.ReadyNs));
        Assert.Equal(LinuxSyscalls.Semtimedop, Assert.Single(a.BySyscall).Key);
        var b = k.Threads[B];
        Assert.Equal((2, 55, 55, 0, 0), (b.Calls, b.SyscallNs, b.KernelCpuNs, b.BlockedNs, b.ReadyNs));
        Assert.Equal(LinuxSyscalls.Futex, Assert.Single(b.BySyscall).Key);
        Assert.Equal(1, k.BoundarySamples);              // B's 180 → 220: its call stayed on CPU 0
        Assert.Equal(1, k.BoundaryAfterOffCpuSamples);   // A's 170 → 200: its call was preempted at 120
        Assert.Equal((1, 0), (a.OffCpuCalls, b.OffCpuCalls));
        Assert.Equal(0, k.UnmatchedExits);
    }

    [Fact]
    public void Region_clips_the_syscall_that_straddles_its_begin()
    {
        var events = TwoSyscalls().ToList();
        events.Insert(2, KernelEvent.Marker(115, 0, A, "TRACELAB_REGION_BEGIN"));
        var futex = Run(a => new KernelTimeAnalyzer(a), [.. events]).Threads[A].BySyscall[LinuxSyscalls.Futex];
        Assert.Equal((170 - 15, 50 - 15, 70, 50), (futex.TotalNs, futex.CpuNs, futex.BlockedNs, futex.ReadyNs));
    }

    [Fact]
    public void Unlogged_switch_in_ends_the_off_cpu_part_at_the_repaired_start()
    {
        // cpu1 goes idle at 150; A is woken at 160 targeting cpu1, the idle→A switch is lost; A's exit at 200 on
        // cpu1 shows it running. ThreadAccounting repairs its start to max(idle seen 150, woken 160) = 160.
        var k = Run(a => new KernelTimeAnalyzer(a),
            KernelEvent.Switch(0, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(0, 1, 0, 120, R, B, 120),
            Futex(100, A, 0x10, FutexWait),
            KernelEvent.Switch(110, 0, A, 120, S, 0, 120),
            KernelEvent.Switch(150, 1, B, 120, S, 0, 120),
            KernelEvent.Waking(160, 0, 0, A, 1),
            Exit(200, 1, A, LinuxSyscalls.Futex));
        var futex = k.Threads[A].BySyscall[LinuxSyscalls.Futex];
        Assert.Equal((100, 10 + 40, 50, 0), (futex.TotalNs, futex.CpuNs, futex.BlockedNs, futex.ReadyNs));
    }

    [Fact]
    public void Boundary_cost_is_the_low_percentile_of_exit_to_enter_gaps()
    {
        // 200 back-to-back sched_yield calls: 100 ns inside, 400 ns from each exit to the next entry, except one
        // 50 µs gap (user work) and a switch between two calls (not a gap sample).
        var events = new List<KernelEvent> { KernelEvent.Switch(0, 0, 0, 120, R, A, 120) };
        long t = 1000;
        for (var i = 0; i < 200; i++)
        {
            events.Add(Enter(t, 0, A, LinuxSyscalls.SchedYield, 0));
            events.Add(Exit(t + 100, 0, A, LinuxSyscalls.SchedYield));
            t += 100 + (i == 50 ? 50_000 : 400);
            if (i == 120)
            {
                events.Add(KernelEvent.Switch(t - 200, 0, A, 120, R, A, 120));
            }
        }
        var k = Run(a => new KernelTimeAnalyzer(a), [.. events]);
        Assert.Equal(198, k.BoundarySamples);    // 199 gaps, one broken by the switch
        Assert.InRange(k.BoundaryNs, 400 * 63 / 64, 400 * 65 / 64);   // histogram precision: 1/64
        Assert.Equal(200, k.Threads[A].Calls);
    }

    /// <summary>
    /// 300 calls, every other one blocking (switched out 10 ns after its entry, woken, back 20 ns later). The gap after
    /// a blocking call is 800 ns, after one that stayed on CPU 400 ns: each class has its own low percentile, and the
    /// report's estimate charges each call its own class's cost.
    /// </summary>
    [Fact]
    public void Calls_that_were_switched_out_have_their_own_boundary_cost()
    {
        var events = new List<KernelEvent> { KernelEvent.Switch(0, 0, 0, 120, R, A, 120) };
        long t = 1000;
        for (var i = 0; i < 300; i++)
        {
            events.Add(Enter(t, 0, A, LinuxSyscalls.Semtimedop, 5));
            var blocks = i % 2 == 0;
            if (blocks)
            {
                events.Add(KernelEvent.Switch(t + 10, 0, A, 120, S, B, 120));
                events.Add(KernelEvent.Waking(t + 20, 0, B, A, 0));
                events.Add(KernelEvent.Switch(t + 30, 0, B, 120, R, A, 120));
            }
            events.Add(Exit(t + 50, 0, A, LinuxSyscalls.Semtimedop));
            t += 50 + (blocks ? 800 : 400);
        }
        var session = new AnalysisSession(AnalysisSelection.Threads | AnalysisSelection.Kernel);
        foreach (var e in events) session.OnEvent(e);
        session.Complete();
        var k = session.Kernel!;
        Assert.Equal((149, 150), (k.BoundarySamples, k.BoundaryAfterOffCpuSamples));
        Assert.InRange(k.BoundaryNs, 400 * 63 / 64, 400 * 65 / 64);              // histogram precision: 1/64
        Assert.InRange(k.BoundaryAfterOffCpuNs, 800 * 63 / 64, 800 * 65 / 64);
        var a = k.Threads[A];
        Assert.Equal((300, 150), (a.Calls, a.OffCpuCalls));
        // On CPU inside: 50 per call that stayed, 10 + 20 per blocking one.
        Assert.Equal(150 * 50 + 150 * 30, a.KernelCpuNs);

        var report = ReportBuilder.Build(new TraceInfo { Backend = "test", TraceFile = "hand-built", CpuCount = 1 },
            new ThreadTable(), session, workload: null, pidOverride: A);
        var row = report.Kernel!.Threads.Single(r => r.Tid == A);
        Assert.Equal((150L, k.BoundaryNs, k.BoundaryAfterOffCpuNs),
            (row.OffCpuCalls, report.Kernel.BoundaryNsPerCall, report.Kernel.BoundaryNsPerOffCpuCall));
        Assert.Equal(Math.Min(row.RunNs, a.KernelCpuNs + 150 * k.BoundaryNs + 150 * k.BoundaryAfterOffCpuNs),
            row.EstimatedKernelNs);
    }

    [Fact]
    public void With_few_off_cpu_gaps_their_boundary_is_the_on_cpu_one()
    {
        var events = new List<KernelEvent> { KernelEvent.Switch(0, 0, 0, 120, R, A, 120) };
        long t = 1000;
        for (var i = 0; i < 200; i++)
        {
            events.Add(Enter(t, 0, A, LinuxSyscalls.SchedYield, 0));
            if (i < 5) events.Add(KernelEvent.Switch(t + 10, 0, A, 120, R, A, 120));   // preempted and back at once
            events.Add(Exit(t + 100, 0, A, LinuxSyscalls.SchedYield));
            t += 100 + (i < 5 ? 900 : 400);
        }
        var k = Run(a => new KernelTimeAnalyzer(a), [.. events]);
        Assert.Equal(5, k.BoundaryAfterOffCpuSamples);
        Assert.Equal(k.BoundaryNs, k.BoundaryAfterOffCpuNs);
    }

    [Fact]
    public void Without_syscall_events_kernel_time_is_not_captured()
    {
        var k = Run(a => new KernelTimeAnalyzer(a),
            KernelEvent.Switch(0, 0, 0, 120, R, A, 120), KernelEvent.Switch(100, 0, A, 120, S, 0, 120));
        Assert.False(k.SawSyscalls);
        Assert.Empty(k.Threads);
    }

    [Fact]
    public void Etw_syscalls_without_a_number_are_keyed_by_address()
    {
        const long address = unchecked((long)0xfffff80012345678);
        var k = Run(a => new KernelTimeAnalyzer(a),
            KernelEvent.Switch(0, 0, 0, 120, R, A, 120),
            Enter(100, 0, A, -1, address), Exit(130, 0, A, -1));
        var s = Assert.Single(k.Threads[A].BySyscall.Values);
        Assert.Equal("0xfffff80012345678", s.Name);
        Assert.Equal(30, s.CpuNs);
    }
}
