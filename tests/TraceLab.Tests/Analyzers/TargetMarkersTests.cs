using TraceLab.Analyzers;
using TraceLab.Analyzers.Locks;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// TraceLab's own TRACELAB_TARGET_* / TRACELAB_THREADS markers, and the process-scoped lock keys built on them.
/// </summary>
public sealed class TargetMarkersTests
{
    private const int Tl = 10, P1 = 100, T1 = 101, P2 = 200, T2 = 201;
    private const int FutexWaitPrivate = 128, FutexWakePrivate = 129, FutexWaitShared = 0, FutexWakeShared = 1;
    private const long Lock = 0x5000;

    [Fact]
    public void Target_markers_bound_the_region_and_name_the_pids_and_threads()
    {
        var r = new MeasuredRegion();
        Assert.True(r.OnMarker(MeasuredRegion.TargetBeginMarker + "\n", 1000, Tl));
        Assert.False(r.OnMarker(MeasuredRegion.TargetPidsMarker + "100,200\n", 1100, Tl));
        Assert.False(r.OnMarker(MeasuredRegion.ThreadsMarker + "100 100,101\n", 1200, Tl));
        Assert.False(r.OnMarker(MeasuredRegion.TargetEndMarker, 5000, Tl));
        Assert.True(r.FromTarget);
        Assert.Equal((1000, 5000), (r.Begin, r.End));
        Assert.Equal(0, r.MarkerTid);                    // TraceLab wrote them: no workload thread to name
        Assert.Equal([100, 200], r.TargetPids);
        Assert.Equal(100, r.ProcessOfThread[101]);
        Assert.Equal(1, r.Openings);
    }

    [Fact]
    public void The_programs_own_markers_reopen_and_win()
    {
        var r = new MeasuredRegion();
        r.OnMarker(MeasuredRegion.TargetBeginMarker, 1000, Tl);
        Assert.True(r.OnMarker(MeasuredRegion.BeginMarker, 2000, T1));
        r.OnMarker(MeasuredRegion.EndMarker, 3000, T1);
        r.OnMarker(MeasuredRegion.TargetEndMarker, 5000, Tl);  // ignored: the program's END closed the region
        Assert.False(r.FromTarget);
        Assert.Equal((2000, 3000), (r.Begin, r.End));
        Assert.Equal(T1, r.MarkerTid);
        Assert.Equal(2, r.Openings);
    }

    [Fact]
    public void Garbage_in_target_markers_is_ignored()
    {
        var r = new MeasuredRegion();
        r.OnMarker(MeasuredRegion.TargetPidsMarker + "x,-3,,7", 1, Tl);
        r.OnMarker(MeasuredRegion.ThreadsMarker + "abc 1,2", 2, Tl);
        r.OnMarker(MeasuredRegion.ThreadsMarker + "5", 3, Tl);
        r.OnMarker(MeasuredRegion.ProcessStartsMarker + "x=1,=5,-2=7,9,8=y,,", 4, Tl);
        Assert.Equal([7], r.TargetPids);
        Assert.Empty(r.ProcessOfThread);
        Assert.Empty(r.ProcessStarts);
    }

    [Fact]
    public void Process_start_markers_give_processes_older_than_the_capture_their_start()
    {
        var r = new MeasuredRegion();
        Assert.False(r.OnMarker(MeasuredRegion.ProcessStartsMarker + "1=-5000000,100=123456789\n", 10, Tl));
        r.OnMarker(MeasuredRegion.ProcessStartsMarker + "200=42", 11, Tl);
        Assert.Equal(new Dictionary<int, long> { [1] = -5_000_000, [100] = 123_456_789, [200] = 42 }, r.ProcessStarts);
    }

    /// <summary>
    /// Two processes (listed by TraceLab) each convoy on a private futex at the same address: two objects.
    /// </summary>
    [Fact]
    public void A_private_futex_is_per_process_a_shared_one_system_wide()
    {
        var listed = new[]
        {
            KernelEvent.Marker(10, 0, Tl, MeasuredRegion.ThreadsMarker + "100 100,101"),
            KernelEvent.Marker(11, 0, Tl, MeasuredRegion.ThreadsMarker + "200 200,201"),
        };
        var priv = Run(a => new ConvoyAnalyzer(a), [.. listed,
            .. WaitAndWake(T1, P1, FutexWaitPrivate, FutexWakePrivate, 100),
            .. WaitAndWake(T2, P2, FutexWaitPrivate, FutexWakePrivate, 1000)]);
        Assert.Equal(["futex 0x5000 (pid 100)", "futex 0x5000 (pid 200)"],
            Futexes(priv));
        var shared = Run(a => new ConvoyAnalyzer(a), [.. listed,
            .. WaitAndWake(T1, P1, FutexWaitShared, FutexWakeShared, 100),
            .. WaitAndWake(T2, P2, FutexWaitShared, FutexWakeShared, 1000)]);
        Assert.Equal("futex 0x5000 (shared)", Assert.Single(Futexes(shared)));
        Assert.Equal("sysv-sem 7 (system-wide)", new LockObject(LockObjectKind.SysVSemaphore, 7).ToString());
    }

    /// <summary>
    /// The target forks a child without exec and the child's thread convoys on a private futex at the same address
    /// as the parent's: task_newtask's clone flags make the child its own process from its creation on, so the two
    /// futexes are two objects; without them (a trace with only sched_process_fork) the child counts as its parent's
    /// process and the two merge into one object.
    /// </summary>
    [Fact]
    public void A_child_forked_without_exec_is_its_own_process_from_its_creation_event()
    {
        const int Child = 300, ChildThread = 301, ChildWaker = 302;
        KernelEvent[] Script(bool withCloneFlags) =>
        [
            KernelEvent.Marker(10, 0, Tl, MeasuredRegion.TargetPidsMarker + P1),
            KernelEvent.Marker(11, 0, Tl, MeasuredRegion.ThreadsMarker + "100 100,101"),
            .. withCloneFlags ? [KernelEvent.Fork(20, 0, P1, Child, ForkChild.Process)] : Array.Empty<KernelEvent>(),
            KernelEvent.Fork(21, 0, P1, Child),
            .. withCloneFlags ? [KernelEvent.Fork(30, 0, Child, ChildThread, ForkChild.Thread)]
                : Array.Empty<KernelEvent>(),
            KernelEvent.Fork(31, 0, Child, ChildThread),
            KernelEvent.Fork(32, 0, Child, ChildWaker, withCloneFlags ? ForkChild.Thread : ForkChild.Unknown),
            .. WaitAndWake(T1, P1, FutexWaitPrivate, FutexWakePrivate, 100),
            .. WaitAndWake(ChildThread, ChildWaker, FutexWaitPrivate, FutexWakePrivate, 1000),
        ];

        var accounting = new ThreadAccounting();
        var convoys = new ConvoyAnalyzer(accounting);
        var pass = new AnalysisPass(accounting, convoys);
        foreach (var e in Script(withCloneFlags: true)) pass.OnEvent(e);
        pass.Complete();
        Assert.Equal(["futex 0x5000 (pid 100)", "futex 0x5000 (pid 300)"],
            Futexes(convoys));
        Assert.Equal((P1, Child, Child, Child), (accounting.Lineage.ProcessOf(T1), accounting.Lineage.ProcessOf(Child),
            accounting.Lineage.ProcessOf(ChildThread), accounting.Lineage.ProcessOf(ChildWaker)));

        var merged = Run(a => new ConvoyAnalyzer(a), Script(withCloneFlags: false));
        Assert.Equal("futex 0x5000 (pid 100)", Assert.Single(Futexes(merged)));
    }

    /// <summary>
    /// A trace from another tool with sched_process_fork only (no listing, exec, target or clone flags): threads
    /// created in the trace join the process of the first creator up their chain, as docs/metrics.md#thread-pid
    /// says, instead of each being a process of its own; a thread nothing created in the trace stays its own.
    /// </summary>
    [Fact]
    public void Threads_created_in_an_unidentified_process_join_their_creators_process()
    {
        const int Leader = 500, Worker = 501, Grandchild = 502, Stranger = 600;
        var accounting = new ThreadAccounting();
        var pass = new AnalysisPass(accounting);
        foreach (var e in new[]
                 {
                     KernelEvent.Fork(10, 0, Leader, Worker),
                     KernelEvent.Fork(20, 1, Worker, Grandchild),
                     KernelEvent.Switch(30, 0, Worker, 120, TaskState.Interruptible, Stranger, 120),
                 })
        {
            pass.OnEvent(e);
        }
        pass.Complete();
        Assert.Equal((Leader, Leader, Leader, Stranger),
            (accounting.Lineage.ProcessOf(Leader), accounting.Lineage.ProcessOf(Worker),
            accounting.Lineage.ProcessOf(Grandchild), accounting.Lineage.ProcessOf(Stranger)));
        // lock keys stay unscoped: the trace names no process
        Assert.Equal(0, accounting.Lineage.KnownProcessOf(Worker));
    }

    private static KernelEvent[] WaitAndWake(int waiter, int waker, int waitOp, int wakeOp, long t) =>
    [
        KernelEvent.Switch(t, 0, 0, 120, TaskState.Running, waiter, 120),
        Futex(t + 10, waiter, Lock, waitOp),
        KernelEvent.Switch(t + 20, 0, waiter, 120, TaskState.Interruptible, waker, 120),
        Futex(t + 30, waker, Lock, wakeOp), KernelEvent.Waking(t + 35, 0, waker, waiter, 0),
        FutexDone(t + 40, waker, 1),
        KernelEvent.Switch(t + 50, 0, waker, 120, TaskState.Interruptible, waiter, 120), FutexDone(t + 60, waiter),
    ];

    /// <summary>
    /// The futex objects, by name: each wait here is also a one-wait wake chain (docs/metrics.md#wake-chains), which
    /// these tests of futex scoping leave aside.
    /// </summary>
    private static IEnumerable<string> Futexes(ConvoyAnalyzer convoys) => convoys.Objects
        .Where(o => o.Object.Kind != LockObjectKind.WakeChain).Select(o => o.Object.ToString()).Order();
}
