using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Locks;
using TraceLab.Core;
using TraceLab.Core.Syscalls;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Findings;

/// <summary>The findings evidence on hand-built traces whose answers are worked out in the comments.</summary>
public sealed class FindingEvidenceAnalyzerTests
{
    private const int G = 201, W = 202, H = 203, X = 204;
    private const long Lock = 0x5000, Event = 0x6000;
    // A private futex of threads whose process the trace does not identify: keyed by its address alone.
    private static readonly LockObject LockObj = new(LockObjectKind.Futex, Lock, LockObject.PerProcess);

    private static FindingEvidence Run(params KernelEvent[] events) =>
        TraceLab.Tests.Analyzers.LockEvents.Run(a => new FindingEvidenceAnalyzer(a), events).Result();

    private static KernelEvent Yield(long ts, int tid) => Enter(ts, 0, tid, LinuxSyscalls.SchedYield, 0);
    private static KernelEvent YieldDone(long ts, int tid) => Exit(ts, 0, tid, LinuxSyscalls.SchedYield);

    /// <summary>
    /// G holds the lock (taken in user space), yields over [100, 300]; W runs meanwhile, finds it taken and waits
    /// from 150; G's first lock operation after the yield is the release at 320, which wakes W at 325.
    /// Holder descheduled 200 ns, W behind it while it was off the CPU: 150 to 300 = 150 ns (300 to 320 is the
    /// critical section's own time).
    /// </summary>
    [Fact]
    public void Yield_while_holding_counts_the_holders_yield_and_the_wait_behind_it()
    {
        var e = Run(
            KernelEvent.Switch(90, 0, 0, 120, R, G, 120),
            Yield(100, G), KernelEvent.Switch(110, 0, G, 120, R, W, 120),
            Futex(150, W, Lock, FutexWait), KernelEvent.Switch(160, 0, W, 120, S, G, 120),
            YieldDone(300, G),
            Futex(320, G, Lock, FutexWake), KernelEvent.Waking(325, 0, G, W, 0), FutexDone(330, G, 1),
            KernelEvent.Switch(340, 0, G, 120, S, W, 120), FutexDone(350, W));
        var o = e.Objects[LockObj];
        Assert.Equal(1, o.DeschedulesWhileHolding);
        Assert.Equal(200, o.HolderDescheduledNs[G]);
        Assert.Equal(150, o.WaitBehindDescheduledNs[W]);
        Assert.Equal(200, o.BlockedNs[W]);        // 150 → 350, the whole blocking call
        Assert.Equal(1, o.BlockingWaits);
        Assert.Equal([G], o.Releasers);
    }

    /// <summary>
    /// The findings' reading of the lock-operation tracker's phases: a waiter already woken is no longer behind the
    /// holder. G holds the lock and sleeps over [30, 100]; W waits from 40, X from 60; X's wait is ended at 80 by
    /// no thread (an interrupt: woken, not yet run), W's only by G's release at 110. Behind the sleeping holder:
    /// W 40 → 100 = 60 ns; X not at all.
    /// </summary>
    [Fact]
    public void A_waiter_already_woken_is_not_behind_the_descheduled_holder()
    {
        var e = Run(
            KernelEvent.Switch(10, 0, 0, 120, R, G, 120),
            KernelEvent.Switch(30, 0, G, 120, S, W, 120),                                      // G sleeps
            Futex(40, W, Lock, FutexWait), KernelEvent.Switch(50, 0, W, 120, S, X, 120),
            Futex(60, X, Lock, FutexWait), KernelEvent.Switch(70, 0, X, 120, S, 0, 120),
            KernelEvent.Waking(80, 0, 0, X, 0),                                                 // X woken
            KernelEvent.Waking(90, 0, 0, G, 0), KernelEvent.Switch(100, 0, 0, 120, R, G, 120), // G back
            Futex(110, G, Lock, FutexWake), KernelEvent.Waking(115, 0, G, W, 0), FutexDone(120, G, 1));
        var o = e.Objects[LockObj];
        Assert.Equal(70, o.HolderDescheduledNs[G]);
        Assert.Equal([(W, 60L)], o.WaitBehindDescheduledNs.Select(kv => (kv.Key, kv.Value)));
    }

    /// <summary>
    /// A short sleep in a long critical section: G yields over [100, 110] and then computes, holding the lock, until
    /// its release at 5,000. W waits from 105. Only the 5 ns W waited while G was off the CPU are behind the
    /// deschedule; the 4,890 ns G ran before releasing it would have run anyway.
    /// </summary>
    [Fact]
    public void Only_the_wait_while_the_holder_is_off_the_cpu_is_behind_the_deschedule()
    {
        var e = Run(
            KernelEvent.Switch(90, 0, 0, 120, R, G, 120),
            Yield(100, G), KernelEvent.Switch(101, 0, G, 120, R, W, 120),
            Futex(105, W, Lock, FutexWait), KernelEvent.Switch(106, 0, W, 120, S, G, 120),
            YieldDone(110, G),
            Futex(5_000, G, Lock, FutexWake), KernelEvent.Waking(5_005, 0, G, W, 0), FutexDone(5_010, G, 1),
            KernelEvent.Switch(5_020, 0, G, 120, S, W, 120), FutexDone(5_030, W));
        var o = e.Objects[LockObj];
        Assert.Equal(1, o.DeschedulesWhileHolding);
        Assert.Equal(10, o.HolderDescheduledNs[G]);
        Assert.Equal(5, o.WaitBehindDescheduledNs[W]);
        Assert.Equal(4_925, o.BlockedNs[W]);
    }

    /// <summary>
    /// G releases at 50 (no waiter: no syscall), yields over [100, 300]; H holds the lock meanwhile and W waits on
    /// H from 150; H's release wakes W at 200. G's next lock operation (a wait at 320) is no release: nothing counts.
    /// </summary>
    [Fact]
    public void Yield_after_releasing_is_not_a_yield_while_holding()
    {
        var e = Run(
            KernelEvent.Switch(90, 0, 0, 120, R, G, 120),
            Yield(100, G), KernelEvent.Switch(110, 0, G, 120, R, W, 120),
            Futex(150, W, Lock, FutexWait), KernelEvent.Switch(160, 0, W, 120, S, H, 120),
            Futex(190, H, Lock, FutexWake), KernelEvent.Waking(200, 0, H, W, 0), FutexDone(205, H, 1),
            KernelEvent.Switch(210, 0, H, 120, S, G, 120),
            YieldDone(300, G),
            Futex(320, G, Lock, FutexWait), FutexDone(322, G, -11));
        var o = e.Objects[LockObj];
        Assert.Equal(0, o.DeschedulesWhileHolding);
        Assert.Empty(o.HolderDescheduledNs);
        Assert.Empty(o.WaitBehindDescheduledNs);
        Assert.Equal([H], o.Releasers);
    }

    /// <summary>
    /// SR1: W sleeps on the event (no lock syscall: poll/read were not traced) from 100; G, holding the lock, sets
    /// the event and wakes W at 200; W runs at 210 and its first lock operation waits on the lock (220); G's release
    /// (its first lock operation since the wakeup) wakes it at 300 and W's wait returns at 320. One cycle of
    /// 320 − 200 = 120 ns.
    /// </summary>
    [Fact]
    public void Wake_while_holding_is_a_wakeup_followed_at_once_by_a_wait_the_wakers_release_ends()
    {
        var e = Run(WakeWhileHolding(Lock));
        var o = e.Objects[LockObj];
        Assert.Equal(1, o.WakeWhileHoldingCycles[W]);
        Assert.Equal(120, o.WakeWhileHoldingNs[W]);
        Assert.Equal([G], o.WakeWhileHoldingWakers);
    }

    private static KernelEvent[] WakeWhileHolding(long secondObject) =>
    [
        KernelEvent.Switch(90, 0, 0, 120, R, W, 120),
        KernelEvent.Switch(100, 0, W, 120, S, G, 120),
        KernelEvent.Waking(200, 0, G, W, 0),
        KernelEvent.Switch(210, 0, G, 120, R, W, 120),
        Futex(220, W, Lock, FutexWait), KernelEvent.Switch(230, 0, W, 120, S, G, 120),
        Futex(290, G, secondObject, FutexWake), KernelEvent.Waking(300, 0, G, W, 0), FutexDone(305, G, 1),
        KernelEvent.Switch(310, 0, G, 120, S, W, 120), FutexDone(320, W),
    ];

    /// <summary>As above, but G's release wakes H, queued earlier; H's release wakes W at 400. The cycle still counts:
    /// 420 − 200.</summary>
    [Fact]
    public void Wake_while_holding_counts_when_the_release_goes_to_an_earlier_waiter()
    {
        var e = Run(
            KernelEvent.Switch(80, 1, 0, 120, R, H, 120),
            Futex(85, H, Lock, FutexWait), KernelEvent.Switch(88, 1, H, 120, S, 0, 120),
            KernelEvent.Switch(90, 0, 0, 120, R, W, 120),
            KernelEvent.Switch(100, 0, W, 120, S, G, 120),
            KernelEvent.Waking(200, 0, G, W, 0),
            KernelEvent.Switch(210, 0, G, 120, R, W, 120),
            Futex(220, W, Lock, FutexWait), KernelEvent.Switch(230, 0, W, 120, S, G, 120),
            Futex(290, G, Lock, FutexWake), KernelEvent.Waking(300, 0, G, H, 1), FutexDone(305, G, 1),
            KernelEvent.Switch(306, 1, 0, 120, R, H, 120), FutexDone(310, H),
            Futex(390, H, Lock, FutexWake), KernelEvent.Waking(400, 1, H, W, 0), FutexDone(405, H, 1),
            KernelEvent.Switch(410, 0, G, 120, S, W, 120), FutexDone(420, W));
        var o = e.Objects[LockObj];
        Assert.Equal(1, o.WakeWhileHoldingCycles[W]);
        Assert.Equal(220, o.WakeWhileHoldingNs[W]);
        Assert.Equal([G], o.WakeWhileHoldingWakers);
        Assert.Equal([G, H], o.Releasers.Order());
    }

    [Fact]
    public void A_wait_ended_by_someone_else_or_on_another_object_is_no_wake_while_holding()
    {
        // G's first lock operation after the wakeup is on another object: it did not hold the lock W blocked on.
        var e = Run(WakeWhileHolding(Event));
        Assert.True(!e.Objects.TryGetValue(LockObj, out var o) || o.WakeWhileHoldingCycles.Count == 0);

        // Woken from a wait on the event, W waits on the same event again: a consumer going back to sleep (SR3).
        var again = Run(
            KernelEvent.Switch(90, 0, 0, 120, R, W, 120),
            Futex(95, W, Event, FutexWait), KernelEvent.Switch(100, 0, W, 120, S, G, 120),
            Futex(190, G, Event, FutexWake), KernelEvent.Waking(200, 0, G, W, 0), FutexDone(205, G, 1),
            KernelEvent.Switch(210, 0, G, 120, R, W, 120), FutexDone(215, W),
            Futex(220, W, Event, FutexWait), KernelEvent.Switch(230, 0, W, 120, S, G, 120),
            Futex(290, G, Event, FutexWake), KernelEvent.Waking(300, 0, G, W, 0), FutexDone(305, G, 1));
        Assert.Empty(
            again.Objects[new LockObject(LockObjectKind.Futex, Event, LockObject.PerProcess)].WakeWhileHoldingCycles);
    }

    /// <summary>
    /// CPU 0: G runs from 100, is preempted by X at 200 (R) and runs again at 500: 300 ns runnable, charged to X.
    /// Then G wakes W at 600 and W preempts it at 610 until 700: a wake preemption, 90 ns, charged to nobody.
    /// Then G yields (R inside sched_yield) at 800 until 900: not a preemption at all. X has priority 100 &lt; 120.
    /// </summary>
    [Fact]
    public void Preemptions_are_charged_to_the_preemptor_except_wake_preemptions_and_yields()
    {
        var e = Run(
            KernelEvent.Switch(100, 0, 0, 120, R, G, 120),
            KernelEvent.Switch(200, 0, G, 120, R, X, 100),
            KernelEvent.Switch(500, 0, X, 100, S, G, 120),
            KernelEvent.Switch(550, 1, 0, 120, R, W, 120), KernelEvent.Switch(560, 1, W, 120, S, 0, 120),
            KernelEvent.Waking(600, 0, G, W, 0),
            KernelEvent.Switch(610, 0, G, 120, R, W, 120),
            KernelEvent.Switch(700, 0, W, 120, S, G, 120),
            Yield(790, G), KernelEvent.Switch(800, 0, G, 120, R, H, 120),
            KernelEvent.Switch(900, 0, H, 120, S, G, 120), YieldDone(905, G));
        var g = e.Threads[G];
        Assert.Equal(2, g.Preemptions);
        Assert.Equal(1, g.WakePreemptions);
        Assert.Equal(300 + 90, g.PreemptedReadyNs);
        Assert.Equal(new Dictionary<int, long> { [X] = 300 }, g.ReadyByPreemptor);
        Assert.Equal(1, g.HigherPriorityPreemptions);
        Assert.Equal(300, g.HigherPriorityReadyNs);
    }

    /// <summary>
    /// G is preempted by X (100 ns), X again (200), H (400), X (800) and H again (1,600), the last still runnable at
    /// the trace's end (50 ns more): each preemptor's time summed whole, keyed in the order the preemptors first came
    /// (X, then H), and all of it is the thread's preempted ready time.
    /// </summary>
    [Fact]
    public void Ready_time_by_preemptor_sums_every_preemption_in_first_come_order()
    {
        var events = new List<KernelEvent> { KernelEvent.Switch(0, 0, 0, 120, R, G, 120) };
        long t = 1_000;
        foreach (var (by, ns) in new[] { (X, 100L), (X, 200L), (H, 400L), (X, 800L), (H, 1_600L) })
        {
            events.Add(KernelEvent.Switch(t, 0, G, 120, R, by, 120));
            events.Add(KernelEvent.Switch(t + ns, 0, by, 120, S, G, 120));
            t += ns + 1_000;
        }
        events.Add(KernelEvent.Switch(t, 0, G, 120, R, H, 120));
        events.Add(KernelEvent.Switch(t + 50, 1, 0, 120, R, W, 120));
        var g = Run([.. events]).Threads[G];

        Assert.Equal([X, H], g.ReadyByPreemptor.Keys);
        Assert.Equal(100 + 200 + 800, g.ReadyByPreemptor[X]);
        Assert.Equal(400 + 1_600 + 50, g.ReadyByPreemptor[H]);
        Assert.Equal(g.PreemptedReadyNs, g.ReadyByPreemptor.Values.Sum());
    }

    [Fact]
    public void Region_begin_drops_what_came_before()
    {
        var e = Run(
            KernelEvent.Switch(100, 0, 0, 120, R, G, 120),
            KernelEvent.Switch(200, 0, G, 120, R, X, 120),
            KernelEvent.Switch(300, 0, X, 120, S, G, 120),
            KernelEvent.Marker(400, 0, G, "TRACELAB_REGION_BEGIN"),
            KernelEvent.Switch(500, 0, G, 120, R, X, 120),
            KernelEvent.Switch(650, 0, X, 120, S, G, 120));
        Assert.Equal(1, e.Threads[G].Preemptions);
        Assert.Equal(150, e.Threads[G].PreemptedReadyNs);
    }
}
