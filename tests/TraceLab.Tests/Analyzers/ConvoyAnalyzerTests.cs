using TraceLab.Analyzers.Locks;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>Handoffs and convoy episodes on hand-built traces whose answers are worked out in the comments.</summary>
public sealed class ConvoyAnalyzerTests
{
    internal const int A = 101, B = 102, C = 103, D = 104;
    private const long Sem = 7, Lock = 0x5000;

    /// <summary>
    /// One CPU, a System V semaphore used as a mutex by A, B, C. A takes it on the fast path; B and C queue; from then
    /// on every release grants it to the oldest waiter: A→B, B→C, C→A, A→B, B→C = 5 handoffs in one chain.
    /// </summary>
    internal static KernelEvent[] SemaphoreConvoy() =>
    [
        KernelEvent.Switch(90, 0, 0, 120, R, A, 120),
        Semop(100, A, Sem), SemopDone(110, A),                       // A: P, fast (acquisition 1)
        KernelEvent.Switch(120, 0, A, 120, R, B, 120),               // A preempted holding it
        Semop(130, B, Sem), KernelEvent.Switch(140, 0, B, 120, S, C, 120),   // B queues at 130
        Semop(150, C, Sem), KernelEvent.Switch(160, 0, C, 120, S, A, 120),   // C queues at 150
        Semop(170, A, Sem), KernelEvent.Waking(175, 0, A, B, 0), SemopDone(180, A),   // A: V grants B
        Semop(190, A, Sem), KernelEvent.Switch(200, 0, A, 120, S, B, 120),            // A queues at 190
        // #1 A→B: queued 130, woken 175, running 200
        SemopDone(210, B),
        Semop(220, B, Sem), KernelEvent.Waking(225, 0, B, C, 0), SemopDone(230, B),
        Semop(240, B, Sem), KernelEvent.Switch(250, 0, B, 120, S, C, 120),            // B queues at 240
        SemopDone(260, C),                                                            // #2 B→C: 150, 225, 250
        Semop(270, C, Sem), KernelEvent.Waking(275, 0, C, A, 0), SemopDone(280, C),
        Semop(290, C, Sem), KernelEvent.Switch(300, 0, C, 120, S, A, 120),            // C queues at 290
        SemopDone(310, A),                                                            // #3 C→A: 190, 275, 300
        Semop(320, A, Sem), KernelEvent.Waking(325, 0, A, B, 0), SemopDone(330, A),
        KernelEvent.Switch(340, 0, A, 120, S, B, 120),                                // A leaves (done)
        SemopDone(350, B),                                                            // #4 A→B: 240, 325, 340
        Semop(360, B, Sem), KernelEvent.Waking(365, 0, B, C, 0), SemopDone(370, B),
        KernelEvent.Switch(380, 0, B, 120, S, C, 120),
        SemopDone(390, C),                                                            // #5 B→C: 290, 365, 380
        Semop(400, C, Sem), SemopDone(410, C),                                        // C: V, nobody waiting
    ];

    [Fact]
    public void Semaphore_convoy_counts_every_handoff_and_one_episode()
    {
        var c = Run(a => new ConvoyAnalyzer(a), SemaphoreConvoy());
        var o = Assert.Single(c.Objects);
        Assert.Equal(new LockObject(LockObjectKind.SysVSemaphore, Sem), o.Object);
        Assert.Equal(5, o.Handoffs);
        Assert.Equal(6, o.Acquisitions);          // A's fast P + 5 handoffs
        Assert.Equal(1, o.FastAcquisitions);
        Assert.Equal(1, o.Episodes);
        Assert.Equal(5, o.LongestChain);
        Assert.Equal(5, o.HandoffsInConvoys);
        Assert.Equal(380 - 175, o.ConvoyNs);      // first grant → last new owner running
        Assert.Equal(5, o.BlockingWaits);
        Assert.Equal(new[] { A, B, C }, o.Participants.Order());
        Assert.Equal(15, o.HandoffGap.Min);       // gaps 25, 25, 25, 15, 15
        Assert.Equal(25, o.HandoffGap.Max);
        Assert.Equal(105, o.HandoffGap.Sum);
        Assert.Equal(45 + 75 + 85 + 85 + 75, o.QueueWait.Sum);

        var b = c.Threads[B];
        Assert.Equal(2, b.HandoffsReceived);
        Assert.Equal(2, b.HandoffsGiven);
        Assert.Equal(2, b.ReceivedFrom[A]);
        Assert.Equal(2, b.GivenTo[C]);
        Assert.Equal((200 - 130) + (340 - 240), b.TimeInConvoyNs);
        Assert.Equal((250 - 150) + (380 - 290), c.Threads[C].TimeInConvoyNs);
        Assert.Equal(300 - 190, c.Threads[A].TimeInConvoyNs);
        Assert.Equal(1, c.Threads[A].HandoffsReceived);
        Assert.Equal(2, c.Threads[A].HandoffsGiven);
        Assert.True(c.SawLockSyscalls);
    }

    [Fact]
    public void A_fast_path_acquisition_breaks_the_chain()
    {
        // B→C, C→A handoffs, then C... : build A→B, B→C; C releases with nobody waiting; D takes it on the fast path;
        // then D→A, A→B, B→C. Chains: 2 handoffs (too short) and 3 (one episode).
        var e = new List<KernelEvent>
        {
            KernelEvent.Switch(90, 0, 0, 120, R, A, 120),
            Semop(100, A, Sem), SemopDone(110, A),
            KernelEvent.Switch(120, 0, A, 120, R, B, 120),
            Semop(130, B, Sem), KernelEvent.Switch(140, 0, B, 120, S, C, 120),
            Semop(150, C, Sem), KernelEvent.Switch(160, 0, C, 120, S, A, 120),
            Semop(170, A, Sem), KernelEvent.Waking(175, 0, A, B, 0), SemopDone(180, A),
            KernelEvent.Switch(200, 0, A, 120, S, B, 120),
            SemopDone(210, B),                                                         // A→B
            Semop(220, B, Sem), KernelEvent.Waking(225, 0, B, C, 0), SemopDone(230, B),
            KernelEvent.Switch(250, 0, B, 120, S, C, 120),
            SemopDone(260, C),                                                         // B→C
            Semop(270, C, Sem), SemopDone(280, C),                                     // C: V, nobody waiting
            KernelEvent.Switch(290, 0, C, 120, S, D, 120),
            Semop(300, D, Sem), SemopDone(310, D),                                     // D: fast P
            KernelEvent.Switch(320, 0, D, 120, R, A, 120),
            Semop(330, A, Sem), KernelEvent.Switch(340, 0, A, 120, S, B, 120),        // A queues
            Semop(350, B, Sem), KernelEvent.Switch(360, 0, B, 120, S, C, 120),        // B queues
            Semop(370, C, Sem), KernelEvent.Switch(380, 0, C, 120, S, D, 120),        // C queues
            Semop(390, D, Sem), KernelEvent.Waking(395, 0, D, A, 0), SemopDone(400, D),
            KernelEvent.Switch(410, 0, D, 120, S, A, 120),
            SemopDone(420, A),                                                         // D→A
            Semop(430, A, Sem), KernelEvent.Waking(435, 0, A, B, 0), SemopDone(440, A),
            KernelEvent.Switch(450, 0, A, 120, S, B, 120),
            SemopDone(460, B),                                                         // A→B
            Semop(470, B, Sem), KernelEvent.Waking(475, 0, B, C, 0), SemopDone(480, B),
            KernelEvent.Switch(490, 0, B, 120, S, C, 120),
            SemopDone(500, C),                                                         // B→C
        };
        var o = Assert.Single(Run(a => new ConvoyAnalyzer(a), [.. e]).Objects);
        Assert.Equal(5, o.Handoffs);
        Assert.Equal(2, o.FastAcquisitions);
        Assert.Equal(1, o.Episodes);
        Assert.Equal(3, o.LongestChain);
        Assert.Equal(3, o.HandoffsInConvoys);
        Assert.Equal(490 - 395, o.ConvoyNs);
    }

    /// <summary>
    /// glibc's futex lock does not hand over: a woken waiter must retake the lock and may lose it to a running thread.
    /// A releases and wakes B; C barges in; B finds it taken and waits again (a lost race, no handoff). C releases
    /// and wakes B; B gets it and later releases with FUTEX_WAKE, which confirms the handoff C→B.
    /// </summary>
    [Fact]
    public void Futex_waiter_that_loses_the_race_is_not_a_handoff()
    {
        var c = Run(a => new ConvoyAnalyzer(a),
            KernelEvent.Switch(90, 0, 0, 120, R, B, 120),
            Futex(100, B, Lock, FutexWait), KernelEvent.Switch(110, 0, B, 120, S, A, 120),
            Futex(120, A, Lock, FutexWake), KernelEvent.Waking(125, 0, A, B, 0), FutexDone(130, A, 1),
            KernelEvent.Switch(140, 0, A, 120, S, C, 120),                    // C runs and takes the lock in user space
            KernelEvent.Switch(150, 0, C, 120, R, B, 120),
            FutexDone(160, B), Futex(170, B, Lock, FutexWait),                // lost race
            KernelEvent.Switch(180, 0, B, 120, S, C, 120),
            Futex(190, C, Lock, FutexWake), KernelEvent.Waking(195, 0, C, B, 0), FutexDone(200, C, 1),
            KernelEvent.Switch(210, 0, C, 120, S, B, 120),
            FutexDone(220, B),
            Futex(300, B, Lock, FutexWake), FutexDone(310, B));               // B releases: it had the lock
        var o = Assert.Single(c.Objects);
        // A private futex of threads whose process the trace does not identify: keyed by its address alone.
        Assert.Equal(new LockObject(LockObjectKind.Futex, Lock, LockObject.PerProcess), o.Object);
        Assert.Null(o.Acquisitions);                                          // the fast path is invisible
        Assert.Equal(1, o.LostRaces);
        Assert.Equal(1, o.Handoffs);
        Assert.Equal(15, o.HandoffGap.Max);                                   // woken 195, running 210
        Assert.Equal(195 - 170, o.QueueWait.Max);
        Assert.Equal(1, c.Threads[B].LostRaces);
        Assert.Equal(1, c.Threads[C].GivenTo[B]);
        Assert.Equal(0, o.Episodes);
    }

    [Fact]
    public void Futex_handoff_still_unconfirmed_at_the_end_is_counted_as_such()
    {
        var c = Run(a => new ConvoyAnalyzer(a),
            KernelEvent.Switch(90, 0, 0, 120, R, B, 120),
            Futex(100, B, Lock, FutexWait), KernelEvent.Switch(110, 0, B, 120, S, A, 120),
            Futex(120, A, Lock, FutexWake), KernelEvent.Waking(125, 0, A, B, 0), FutexDone(130, A, 1),
            KernelEvent.Switch(140, 0, A, 120, S, B, 120), FutexDone(150, B));
        Assert.Equal(0, Assert.Single(c.Objects).Handoffs);
        Assert.Equal(1, c.UnconfirmedHandoffs);
    }

    [Fact]
    public void Wakeup_from_interrupt_context_or_by_an_unrelated_syscall_is_not_a_handoff()
    {
        var c = Run(a => new ConvoyAnalyzer(a),
            KernelEvent.Switch(90, 0, 0, 120, R, B, 120),
            Semop(100, B, Sem), KernelEvent.Switch(110, 0, B, 120, S, A, 120),
            KernelEvent.Waking(120, 0, A, B, 0).WithFlags(EventFlags.HardIrq),  // e.g. a timeout
            KernelEvent.Switch(130, 0, A, 120, R, B, 120),
                Exit(140, 0, B, TraceLab.Core.Syscalls.LinuxSyscalls.Semtimedop, -11),
            Semop(150, B, Sem), KernelEvent.Switch(160, 0, B, 120, S, A, 120),
            Futex(170, A, Lock, FutexWake), KernelEvent.Waking(175, 0, A, B, 0), FutexDone(180, A, 1),  // wrong object
            KernelEvent.Switch(190, 0, A, 120, S, B, 120), SemopDone(200, B));
        Assert.All(c.Objects, o => Assert.Equal(0, o.Handoffs));
    }

    /// <summary>
    /// No syscalls (ETW without SystemCall events): a wait for a lock-type reason (UserRequest = 6) ended by a thread
    /// of the same process is a handoff on the process's inferred object; a Sleep (DelayExecution = 4) is not.
    /// </summary>
    [Fact]
    public void Without_syscalls_handoffs_are_inferred_from_wait_reasons_within_a_process()
    {
        const int P = 100, UserRequest = 6, DelayExecution = 4;
        var c = Run(a => new ConvoyAnalyzer(a),
            KernelEvent.Fork(10, 0, P, A), KernelEvent.Fork(11, 0, P, B), KernelEvent.Fork(12, 0, P, C),
            KernelEvent.Switch(90, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(100, 0, A, 120, S, B, 120, UserRequest),
            KernelEvent.Switch(110, 0, B, 120, S, C, 120, UserRequest),
            KernelEvent.Waking(120, 0, C, A, 0),
            KernelEvent.Switch(130, 0, C, 120, S, A, 120, UserRequest),       // C→A: queued 100, woken 120, running 130
            KernelEvent.Waking(140, 0, A, B, 0),
            KernelEvent.Switch(150, 0, A, 120, S, B, 120, UserRequest),       // A→B
            KernelEvent.Waking(160, 0, B, C, 0),
            KernelEvent.Switch(170, 0, B, 120, S, C, 120, DelayExecution),    // B→C; B now sleeps
            KernelEvent.Waking(180, 0, C, B, 0),                              // not a lock wait: no handoff
            KernelEvent.Switch(190, 0, C, 120, S, B, 120, UserRequest));
        Assert.False(c.SawLockSyscalls);
        var o = Assert.Single(c.Objects);
        Assert.Equal(new LockObject(LockObjectKind.Inferred, P), o.Object);
        Assert.Equal(3, o.Handoffs);
        Assert.Equal(1, o.Episodes);
        Assert.Equal(30, o.HandoffGap.Sum);
    }

    [Fact]
    public void Handoffs_before_the_region_are_not_counted()
    {
        var events = SemaphoreConvoy().ToList();
        events.Insert(
            events.FindIndex(e => e.Timestamp == 310), KernelEvent.Marker(305, 0, A, "TRACELAB_REGION_BEGIN"));
        var o = Assert.Single(Run(a => new ConvoyAnalyzer(a), [.. events]).Objects);
        // Handoffs count by grant time: #3 was granted at 275, before the region; #4 and #5 are in it. The chain
        // #3-#4-#5 is still one episode, clipped to the region: 305 → 380.
        Assert.Equal(2, o.Handoffs);
        Assert.Equal(1, o.Episodes);
        Assert.Equal(380 - 305, o.ConvoyNs);
    }

    [Fact]
    public void Receivers_in_two_open_episodes_are_credited_for_both()
    {
        // The convoy trace, then the same again 1000 ns later on another semaphore (A taking over the CPU from C).
        // The first episode stays open until the end (no later handoff on Sem breaks it), so during the second one
        // every receiver is a member of two open episodes: each thread's convoy time and handoffs count twice.
        const long Sem2 = 8;
        var first = SemaphoreConvoy();
        var second = SemaphoreConvoy().Skip(1).Select(e =>
        {
            e.Timestamp += 1000;
            if (e.Kind == KernelEventKind.SyscallEnter) e.Arg0 = Sem2;
            return e;
        });
        var c = Run(a => new ConvoyAnalyzer(a), [.. first, KernelEvent.Switch(1090, 0, C, 120, R, A, 120), .. second]);

        Assert.Equal(2, c.Objects.Count());
        foreach (var o in c.Objects)
        {
            Assert.Equal(1, o.Episodes);
            Assert.Equal(5, o.HandoffsInConvoys);
            Assert.Equal(380 - 175, o.ConvoyNs);
        }
        Assert.Equal(2 * ((200 - 130) + (340 - 240)), c.Threads[B].TimeInConvoyNs);
        Assert.Equal(2 * ((250 - 150) + (380 - 290)), c.Threads[C].TimeInConvoyNs);
        Assert.Equal(2 * (300 - 190), c.Threads[A].TimeInConvoyNs);
        Assert.Equal((4, 4, 2), (c.Threads[B].HandoffsReceivedInConvoys, c.Threads[C].HandoffsReceivedInConvoys,
            c.Threads[A].HandoffsReceivedInConvoys));
    }

    [Fact]
    public void A_receiver_that_holds_the_lock_long_ends_the_episode()
    {
        // The convoy trace with every event from B's second release (#5's grant at 365) on moved 2 ms later: B held
        // the lock 2 ms after running with it at 340, so #5 starts a new chain and the first (4 handoffs) stays one
        // episode.
        var shifted = SemaphoreConvoy().Select(e =>
        {
            if (e.Timestamp >= 360) e.Timestamp += 2_000_000;
            return e;
        }).ToArray();
        var o = Assert.Single(Run(a => new ConvoyAnalyzer(a), shifted).Objects);
        Assert.Equal(5, o.Handoffs);
        Assert.Equal(1, o.Episodes);
        Assert.Equal(4, o.LongestChain);
        Assert.Equal(340 - 175, o.ConvoyNs);
    }
}
