using TraceLab.Analyzers;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Analyzers.Waits;
using TraceLab.Capture.Linux;
using TraceLab.Core;
using TraceLab.Core.Syscalls;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// The wait classes and wake sources (docs/metrics.md#wait-classes) and the wait-for graph's interrupt vertices
/// (docs/metrics.md#wait-for-graph) on a hand-built trace whose answers are worked out beside each thread.
/// </summary>
public sealed class WaitClassAnalyzerTests
{
    // One CPU per thread: cpu = tid - 10.
    private const int A = 10, B = 11, C = 12, D = 13, E = 14, F = 15, G = 16, H = 17, I = 18, K = 19;
    private const long Mutex = 0x1000, Cond = 0x2000, Timed = 0x3000;
    private const long Du = TaskState.Uninterruptible;
    private const int EpollWait = 232, Kill = 62, Nanosleep = 35, Fsync = 74, ETimedOut = -110;

    private sealed record Run(WaitClassAnalyzer Waits, WaitForGraph Graph, ThreadAccounting Accounting);

    private static KernelEvent In(long ts, int tid) => KernelEvent.Switch(ts, tid - 10, 0, 120, R, tid, 120);

    private static KernelEvent Out(long ts, int tid, long state = S) =>
        KernelEvent.Switch(ts, tid - 10, tid, 120, state, 0, 120);

    private static KernelEvent Sys(long ts, int tid, int nr, long arg0 = 0, long arg1 = 0) =>
        Enter(ts, tid - 10, tid, nr, arg0, arg1);

    private static KernelEvent Ret(long ts, int tid, int nr, long ret = 0) => Exit(ts, tid - 10, tid, nr, ret);

    private static KernelEvent IrqWakes(long ts, int tid, byte flags) =>
        KernelEvent.Waking(ts, tid - 10, 0, tid, tid - 10).WithFlags(flags);

    /// <summary>
    /// A and B take turns on a mutex (each wakes the other): lock. C, a pool worker, waits on a condition A signals
    /// and never waits on: condition. D's timed futex wait expires: condition, ended by the timer. E's epoll_wait
    /// ends in the network softirq: I/O. F's epoll_wait ends by G's kill: a latch, lock. H sleeps: sleep, timer.
    /// I's fsync waits in D state until the disk interrupt: commit. K blocks in no recorded syscall: unknown.
    /// </summary>
    private static Run Analyze()
    {
        KernelEvent[] events =
        [
            In(1000, A), In(1000, B), In(1000, C), In(1000, D), In(1000, E), In(1000, F), In(1000, G), In(1000, H),
            In(1000, I), In(1000, K),
            Sys(2000, A, LinuxSyscalls.Futex, Mutex, FutexWait),
            Sys(2000, C, LinuxSyscalls.Futex, Cond, FutexWait),
            Sys(2000, D, LinuxSyscalls.Futex, Timed, FutexWait),
            Sys(2000, E, EpollWait),
            Sys(2000, F, EpollWait),
            Sys(2000, H, Nanosleep),
            Sys(2000, I, Fsync),
            Out(2100, A), Out(2100, C), Out(2100, D), Out(2100, E), Out(2100, F), Out(2100, H), Out(2100, I, Du),
            Out(2100, K),
            // A blocked 2100..3100 on the mutex, released by B.
            Sys(3000, B, LinuxSyscalls.Futex, Mutex, FutexWake),
            KernelEvent.Waking(3100, 1, B, A, 0),
            Ret(3200, B, LinuxSyscalls.Futex),
            In(3300, A), Ret(3400, A, LinuxSyscalls.Futex),
            // B blocked 4100..5100 on the mutex, released by A.
            Sys(4000, B, LinuxSyscalls.Futex, Mutex, FutexWait),
            Out(4100, B),
            Sys(5000, A, LinuxSyscalls.Futex, Mutex, FutexWake),
            KernelEvent.Waking(5100, 0, A, B, 1),
            Ret(5200, A, LinuxSyscalls.Futex),
            In(5300, B), Ret(5400, B, LinuxSyscalls.Futex),
            // C blocked 2100..6100 on the condition, signalled by A.
            Sys(6000, A, LinuxSyscalls.Futex, Cond, FutexWake),
            KernelEvent.Waking(6100, 0, A, C, 2),
            Ret(6200, A, LinuxSyscalls.Futex),
            In(6300, C), Ret(6400, C, LinuxSyscalls.Futex),
            // D blocked 2100..7100; its timeout's hrtimer wakes it; the call returns -ETIMEDOUT.
            IrqWakes(7100, D, EventFlags.HardIrq),
            In(7200, D), Ret(7300, D, LinuxSyscalls.Futex, ETimedOut),
            // E blocked 2100..8100; the network receive softirq (on the idle CPU) wakes it.
            IrqWakes(8100, E, EventFlags.SoftIrq),
            In(8200, E), Ret(8300, E, EpollWait, 1),
            // F blocked 2100..9100; G sends it a signal.
            Sys(9000, G, Kill, F),
            KernelEvent.Waking(9100, 6, G, F, 5),
            Ret(9200, G, Kill),
            In(9300, F), Ret(9400, F, EpollWait, -4),
            // H blocked 2100..10100 in nanosleep; I 2100..11100 in fsync; K 2100..12100 outside any syscall.
            IrqWakes(10100, H, EventFlags.HardIrq),
            In(10200, H), Ret(10300, H, Nanosleep),
            IrqWakes(11100, I, EventFlags.HardIrq),
            In(11200, I), Ret(11300, I, Fsync),
            IrqWakes(12100, K, EventFlags.HardIrq),
            In(12200, K),
            Out(13000, A, R),
        ];
        var accounting = new ThreadAccounting();
        var waits = new WaitClassAnalyzer(accounting);
        var graph = new WaitForGraphAnalyzer(accounting.Region, accounting.Slots);
        var pass = new AnalysisPass(accounting, waits, graph);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        return new Run(waits, graph.Result, accounting);
    }

    [Theory]
    [InlineData(A, WaitClass.Lock, 1000, WakeSource.OtherProcess)]
    [InlineData(B, WaitClass.Lock, 1000, WakeSource.OtherProcess)]
    [InlineData(C, WaitClass.Condition, 4000, WakeSource.OtherProcess)]
    [InlineData(D, WaitClass.Condition, 5000, WakeSource.HardIrq)]
    [InlineData(E, WaitClass.Io, 6000, WakeSource.SoftIrq)]
    [InlineData(F, WaitClass.Lock, 7000, WakeSource.Signal)]
    [InlineData(H, WaitClass.Sleep, 8000, WakeSource.HardIrq)]
    [InlineData(I, WaitClass.Commit, 9000, WakeSource.HardIrq)]
    [InlineData(K, WaitClass.Unknown, 10000, WakeSource.HardIrq)]
    public void Each_blocked_interval_gets_the_class_and_source_worked_out_by_hand(
        int tid, WaitClass expected, long ns, WakeSource source)
    {
        var run = Analyze();
        var s = run.Waits.Threads[tid];
        foreach (var c in WaitClasses.All)
        {
            Assert.Equal(c == expected ? ns : 0, s.Ns(c));
            Assert.Equal(c == expected ? 1 : 0, s.Waits(c));
        }
        Assert.Equal(ns, s.SourceNs(source));
        // The classes split exactly the wait time the accounting measures, nothing more, nothing less.
        Assert.Equal(run.Accounting.Threads[tid].WaitNs, s.TotalNs);
    }

    /// <summary>
    /// A receiver blocks on a sender's mutex the sender never waits on (the sender only ever releases it): the waker
    /// does not wait on the word, so only the expected value tells it from a condition. Waiting for 2 (glibc's
    /// contended mutex word) makes it a lock; the same wait expecting 0 (a condition variable's sequence) does not.
    /// </summary>
    [Theory]
    [InlineData(WaitClassifier.ContendedMutexValue, WaitClass.Lock)]
    [InlineData(0L, WaitClass.Condition)]
    public void A_wait_for_a_contended_mutex_word_is_a_lock_whoever_releases_it(long expected, WaitClass cls)
    {
        KernelEvent[] events =
        [
            In(1000, A), In(1000, B),
            KernelEvent.SyscallEnter(2000, 0, A, LinuxSyscalls.Futex, Mutex, FutexWait, expected),
            Out(2100, A),
            Sys(3000, B, LinuxSyscalls.Futex, Mutex, FutexWake),
            KernelEvent.Waking(3100, 1, B, A, 0),
            Ret(3200, B, LinuxSyscalls.Futex),
            In(3300, A), Ret(3400, A, LinuxSyscalls.Futex),
            Out(4000, B, R),
        ];
        var accounting = new ThreadAccounting();
        var waits = new WaitClassAnalyzer(accounting);
        var pass = new AnalysisPass(accounting, waits);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        Assert.Equal(1000, waits.Threads[A].Ns(cls));
        Assert.Equal(1000, waits.Threads[A].TotalNs);
    }

    /// <summary>
    /// B's release wakes A between A's dequeue and A's logged switch-out (the waker's CPU logs sched_waking first,
    /// as on real traces of a contended mutex): A's wait is a lock wait of 0 ns, ended by B, and the mutex stays a
    /// lock. With a second waking after the switch-out the first one found A still running: A then waited until
    /// the second, 2100 → 3100.
    /// </summary>
    [Theory]
    [InlineData(false, 0L)]
    [InlineData(true, 1000L)]
    public void A_waking_logged_before_the_switch_out_ends_that_wait(bool secondWaking, long ns)
    {
        List<KernelEvent> events =
        [
            In(1000, A), In(1000, B),
            KernelEvent.SyscallEnter(2000, 0, A, LinuxSyscalls.Futex, Mutex, FutexWait, 2),
            Sys(2050, B, LinuxSyscalls.Futex, Mutex, FutexWake),
            KernelEvent.Waking(2090, 1, B, A, 0),
            Out(2100, A),
            Ret(2150, B, LinuxSyscalls.Futex),
        ];
        if (secondWaking)
        {
            events.Add(Sys(3000, B, LinuxSyscalls.Futex, Mutex, FutexWake));
            events.Add(KernelEvent.Waking(3100, 1, B, A, 0));
        }
        events.AddRange([In(3300, A), Ret(3400, A, LinuxSyscalls.Futex), Out(4000, B, R)]);
        var accounting = new ThreadAccounting();
        var waits = new WaitClassAnalyzer(accounting);
        var graph = new WaitForGraphAnalyzer(accounting);
        var pass = new AnalysisPass(accounting, waits, graph);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        var a = waits.Threads[A];
        Assert.Equal((ns, 1L), (a.Ns(WaitClass.Lock), a.Waits(WaitClass.Lock)));
        // The wait-for graph gives the same wait to B, nothing to "unknown".
        Assert.Equal(0, graph.Result.Edge(A, WaitVertex.Unknown).WeightNs);
        Assert.Equal(ns, graph.Result.Edge(A, B).WeightNs);
        Assert.Equal(ns, a.TotalNs);
        Assert.Equal(accounting.Threads[A].WaitNs, a.TotalNs);
        Assert.False(waits.IsNotALock(new LockObject(LockObjectKind.Futex, Mutex, LockObject.PerProcess)));
    }

    /// <summary>
    /// A lock with a timed retry (CPython's GIL): A waits on the lock's word and times out, B waits on it and A
    /// releases it. Because a thread that waits on the word released a wait on it, the threads take turns at it, and
    /// A's timed-out wait was queueing for it: lock. The same timed-out wait on a word nobody else waits on is a
    /// condition (D's in <see cref="Analyze"/>).
    /// </summary>
    [Fact]
    public void A_wait_that_timed_out_on_a_lock_the_threads_take_turns_at_is_a_lock_wait()
    {
        KernelEvent[] events =
        [
            In(1000, A), In(1000, B),
            Sys(2000, A, LinuxSyscalls.Futex, Mutex, FutexWait),
            Out(2100, A),
            IrqWakes(7100, A, EventFlags.HardIrq),
            In(7200, A), Ret(7300, A, LinuxSyscalls.Futex, ETimedOut),
            Sys(8000, B, LinuxSyscalls.Futex, Mutex, FutexWait),
            Out(8100, B),
            Sys(9000, A, LinuxSyscalls.Futex, Mutex, FutexWake),
            KernelEvent.Waking(9100, 0, A, B, 1),
            Ret(9200, A, LinuxSyscalls.Futex),
            In(9300, B), Ret(9400, B, LinuxSyscalls.Futex),
            Out(10000, A, R),
        ];
        var waits = Pass(events);
        Assert.Equal((5000L, 1L), (waits.Threads[A].Ns(WaitClass.Lock), waits.Threads[A].Waits(WaitClass.Lock)));
        Assert.Equal(5000, waits.Threads[A].SourceNs(WakeSource.HardIrq));
        Assert.Equal(1000, waits.Threads[B].Ns(WaitClass.Lock));
        Assert.Equal(WaitClass.Condition, WaitClassifier.SettleTimedOut(false));
    }

    /// <summary>
    /// Three peers each park on a private futex of their own and release one another in turn, three times each way
    /// per pair (InnoDB's row-lock waits on per-transaction condition variables): every wait is a lock wait. With
    /// two turns each way, as a coordinator and its workers exchanging work now and then, they are conditions; so
    /// are they when each thread is released by one thread only.
    /// </summary>
    [Theory]
    [InlineData(3, true, WaitClass.Lock)]
    [InlineData(2, true, WaitClass.Condition)]
    [InlineData(3, false, WaitClass.Condition)]
    public void Peers_that_release_one_another_from_their_own_parking_places_wait_for_a_lock(
        int turns, bool bothWays, WaitClass expected)
    {
        int[] peers = [A, B, C];
        var events = new List<KernelEvent> { In(1000, A), In(1000, B), In(1000, C) };
        long ts = 2000;
        // Round r: peers[r % 3] waits on its own word; the next peer (or, in the second half, the one after it)
        // releases it. Each ordered pair gets `turns` releases when both directions are used.
        var rounds = 3 * turns * (bothWays ? 2 : 1);
        for (var r = 0; r < rounds; r++)
        {
            var waiter = peers[r % 3];
            var step = bothWays && r >= rounds / 2 ? 2 : 1;
            var waker = peers[(r + step) % 3];
            long own = 0x5000 + 0x100 * (waiter - A);
            events.AddRange(
            [
                Sys(ts, waiter, LinuxSyscalls.Futex, own, FutexWait), Out(ts + 100, waiter),
                Sys(ts + 900, waker, LinuxSyscalls.Futex, own, FutexWake),
                KernelEvent.Waking(ts + 1000, waker - 10, waker, waiter, waiter - 10),
                Ret(ts + 1100, waker, LinuxSyscalls.Futex),
                In(ts + 1200, waiter), Ret(ts + 1300, waiter, LinuxSyscalls.Futex),
            ]);
            ts += 2000;
        }
        events.Add(Out(ts, A, R));
        var waits = Pass([.. events]);
        foreach (var tid in peers)
        {
            Assert.Equal(waits.Threads[tid].TotalNs, waits.Threads[tid].Ns(expected));
            Assert.True(waits.Threads[tid].TotalNs > 0);
        }
    }

    /// <summary>
    /// A switch-in that was not logged (a broken switch chain): the thread's next switch-out proves it ran, so the
    /// first wait ends there (1,000 ns, no waker) and is counted, not overwritten by the second (2,000 ns, woken by A).
    /// </summary>
    [Fact]
    public void A_second_switch_out_without_a_switch_in_ends_the_first_wait()
    {
        KernelEvent[] events =
        [
            In(1000, A), In(1000, B),
            Out(2000, B),
            // B's switch-in is missing; it switches out again.
            Out(3000, B),
            KernelEvent.Waking(5000, 0, A, B, 1),
            In(5100, B),
        ];
        var waits = Pass(events);
        Assert.Equal(3000, waits.Threads[B].Ns(WaitClass.Unknown));
        Assert.Equal(2, waits.Threads[B].Waits(WaitClass.Unknown));
        Assert.Equal(1000, waits.Threads[B].SourceNs(WakeSource.None));
        Assert.Equal(2000, waits.Threads[B].SourceNs(WakeSource.OtherProcess));
    }

    private static WaitClassAnalyzer Pass(KernelEvent[] events)
    {
        var accounting = new ThreadAccounting();
        var waits = new WaitClassAnalyzer(accounting);
        var pass = new AnalysisPass(accounting, waits);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        return waits;
    }

    /// <summary>
    /// A wake chain whose waiters wait mostly for something other than a lock (C, a pool worker parked on a
    /// condition) is not a lock; one whose waiters are the mutex's A and B is.
    /// </summary>
    [Fact]
    public void A_wake_chain_of_condition_waiters_is_not_a_lock()
    {
        var waits = Analyze().Waits;
        var pool = new LockObjectStats(new LockObject(LockObjectKind.WakeChain, 1, 0));
        pool.Waiters.Add(C);
        var queue = new LockObjectStats(new LockObject(LockObjectKind.WakeChain, 2, 0));
        queue.Waiters.UnionWith([A, B]);
        Assert.True(waits.IsNotALock(pool));
        Assert.False(waits.IsNotALock(queue));
    }

    [Fact]
    public void A_futex_only_signalled_is_not_a_lock_and_the_mutex_is()
    {
        var waits = Analyze().Waits;
        Assert.True(waits.IsNotALock(new LockObject(LockObjectKind.Futex, Cond, LockObject.PerProcess)));
        Assert.True(waits.IsNotALock(new LockObject(LockObjectKind.Futex, Timed, LockObject.PerProcess)));
        Assert.False(waits.IsNotALock(new LockObject(LockObjectKind.Futex, Mutex, LockObject.PerProcess)));
    }

    [Theory]
    [InlineData(D, WaitVertex.Timer, 5000)]
    [InlineData(E, WaitVertex.Network, 6000)]
    [InlineData(F, G, 7000)]
    [InlineData(H, WaitVertex.Timer, 8000)]
    [InlineData(I, WaitVertex.Disk, 9000)]
    [InlineData(K, WaitVertex.KernelIrq, 10000)]
    public void The_wait_for_graph_names_what_ended_an_interrupt_woken_wait(int tid, int vertex, long ns)
    {
        var g = Analyze().Graph;
        Assert.Equal(new WaitEdge(tid, vertex, ns, 1), Assert.Single(g.Edges, e => e.From == tid));
    }

    [Fact]
    public void A_wait_still_open_at_the_end_is_counted_apart_in_the_graph()
    {
        var accounting = new ThreadAccounting();
        var graph = new WaitForGraphAnalyzer(accounting.Region, accounting.Slots);
        var pass = new AnalysisPass(accounting, graph);
        pass.OnEvent(In(1000, A));
        pass.OnEvent(Out(2000, A));
        pass.OnEvent(In(5000, B));
        pass.Complete();
        Assert.Equal(3000, graph.Result.Edge(A, WaitVertex.Unknown).WeightNs);
        Assert.Equal(3000, graph.Result.OpenAtEndNs[A]);
    }

    /// <summary>The numeric lists of <see cref="WaitCalls"/> checked against the syscall name table.</summary>
    [Fact]
    public void Every_syscall_the_waits_capture_records_has_a_family_by_its_name()
    {
        var numbers = Enumerable.Range(0, 512).ToDictionary(LinuxSyscalls.Name, n => n);
        var signals = new HashSet<string> { "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
            "pidfd_send_signal" };
        foreach (var name in CaptureEventSet.WaitSyscallNames)
        {
            var nr = numbers[name];
            Assert.Equal(signals.Contains(name), WaitCalls.SendsSignal(nr));
            var family = WaitCalls.Of(nr, 0);
            Assert.True(signals.Contains(name) ? family == WaitCall.Other : family != WaitCall.Other,
                $"{name} ({nr}) is {family}");
        }
        Assert.Equal(WaitCall.Multiplex, WaitCalls.Of(numbers["epoll_wait"], 0));
        Assert.Equal(WaitCall.Commit, WaitCalls.Of(numbers["fdatasync"], 0));
        Assert.Equal(WaitCall.Sleep, WaitCalls.Of(numbers["clock_nanosleep"], 0));
        Assert.Equal(WaitCall.Io, WaitCalls.Of(numbers["recvfrom"], 0));
        Assert.Equal(WaitCall.FutexLockPi, WaitCalls.Of(LinuxSyscalls.Futex, 6 | 128));
        Assert.Equal(WaitCall.FutexWait, WaitCalls.Of(LinuxSyscalls.Futex, 9 | 128));
    }
}
