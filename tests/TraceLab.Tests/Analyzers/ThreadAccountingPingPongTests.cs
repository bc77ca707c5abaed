using TraceLab.Core;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Analyzers;

public sealed class ThreadAccountingPingPongTests
{
    private const int A = 100, B = 200, C = 300;
    private const long S = TaskState.Interruptible, D = TaskState.Uninterruptible, R = TaskState.Running;

    /// <summary>
    /// Two CPUs, no markers (the region is the whole trace, closed at the last event, 15000).
    /// cpu0: A 1000..7000, C 7000..8000, A 8000..12000, C 12000..14000, A 14000..end.
    /// cpu1: B 1000..3000, idle, B 5600..9000, idle, B 10000..15000.
    /// </summary>
    private static readonly KernelEvent[] Script =
    [
        KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
        KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
        KernelEvent.Switch(3000, 1, B, 120, S, 0, 120),                 // B sleeps (voluntary)
        KernelEvent.Waking(5000, 0, A, B, 1),                           // A wakes B
        KernelEvent.Switch(5600, 1, 0, 120, R, B, 120),                 // B runs after 600 ns ready
        KernelEvent.Waking(6000, 1, B, C, 0),                           // B wakes C (first sighting)
        KernelEvent.Switch(7000, 0, A, 120, R, C, 120),                 // A preempted (involuntary)
        // "S+": preempted while going to sleep
        KernelEvent.Switch(8000, 0, C, 120, S | TaskState.PreemptedFlag, A, 120),
        KernelEvent.Switch(9000, 1, B, 120, S, 0, 120),
        KernelEvent.Waking(9500, 0, A, B, 1),
        KernelEvent.Switch(10000, 1, 0, 120, R, B, 120),
        KernelEvent.Switch(12000, 0, A, 120, S, C, 120),
        KernelEvent.Waking(13000, 1, B, A, 0),
        KernelEvent.Switch(14000, 0, C, 120, D, A, 120),                // D: voluntary
        KernelEvent.Switch(15000, 1, B, 120, R, 0, 120),                // prev_state R: involuntary
    ];

    [Fact]
    public void Run_ready_and_wait_times_are_exact()
    {
        var acc = Run(Script);

        var a = acc.Threads[A];
        Assert.Equal(6000 + 4000 + 1000, a.RunNs);
        Assert.Equal(1000 + 1000, a.ReadyNs);
        Assert.Equal(1000, a.WaitNs);

        var b = acc.Threads[B];
        Assert.Equal(2000 + 3400 + 5000, b.RunNs);
        Assert.Equal(600 + 500, b.ReadyNs);
        Assert.Equal(2000 + 500, b.WaitNs);

        var c = acc.Threads[C];
        Assert.Equal(1000 + 2000, c.RunNs);
        Assert.Equal(1000 + 4000, c.ReadyNs);
        Assert.Equal(1000, c.WaitNs);

        // Every thread is accounted for without gaps from its first sighting to the end of the trace.
        Assert.Equal(14000, a.RunNs + a.ReadyNs + a.WaitNs);
        Assert.Equal(14000, b.RunNs + b.ReadyNs + b.WaitNs);
        Assert.Equal(9000, c.RunNs + c.ReadyNs + c.WaitNs);
        Assert.False(acc.Threads.ContainsKey(0));
    }

    [Fact]
    public void Switches_are_split_by_prev_state()
    {
        var acc = Run(Script);
        Assert.Equal(11, acc.SwitchEvents);
        Assert.Equal(0, acc.ChainBreaks);

        // A: S at 12000 voluntary; R at 7000 involuntary.
        Assert.Equal(1, acc.Threads[A].VoluntarySwitches);
        Assert.Equal(1, acc.Threads[A].InvoluntarySwitches);
        // B: S at 3000 and 9000; R at 15000.
        Assert.Equal(2, acc.Threads[B].VoluntarySwitches);
        Assert.Equal(1, acc.Threads[B].InvoluntarySwitches);
        // C: D at 14000 voluntary; S|0x100 at 8000 is a preemption.
        Assert.Equal(1, acc.Threads[C].VoluntarySwitches);
        Assert.Equal(1, acc.Threads[C].InvoluntarySwitches);
        Assert.All(acc.Threads.Values, s => Assert.Equal(0, s.RepairedStarts));
    }

    [Fact]
    public void Wakeups_and_wakers_are_attributed()
    {
        var acc = Run(Script);
        var a = acc.Threads[A];
        var b = acc.Threads[B];
        var c = acc.Threads[C];

        Assert.Equal(1, a.WakeupsReceived);
        Assert.Equal(2, a.WakeupsGiven);       // B at 5000 and 9500
        Assert.Equal(new Dictionary<int, long> { [B] = 1 }, a.Wakers);

        Assert.Equal(2, b.WakeupsReceived);
        Assert.Equal(2, b.WakeupsGiven);       // C at 6000, A at 13000
        Assert.Equal(new Dictionary<int, long> { [A] = 2 }, b.Wakers);

        Assert.Equal(1, c.WakeupsReceived);
        Assert.Equal(0, c.WakeupsGiven);
        Assert.Equal(new Dictionary<int, long> { [B] = 1 }, c.Wakers);
    }

    [Fact]
    public void Ready_latency_counts_logged_switch_ins_from_wakeup_or_preemption()
    {
        var acc = Run(Script);
        var a = acc.Threads[A].ReadyLatency;   // preempted 7000 -> 8000, woken 13000 -> 14000
        Assert.Equal(2, a.Count);
        Assert.Equal(1000, a.Max);
        Assert.Equal(2000, a.Sum);

        var b = acc.Threads[B].ReadyLatency;   // 5000 -> 5600, 9500 -> 10000
        Assert.Equal(2, b.Count);
        Assert.Equal(600, b.Max);
        Assert.Equal(500, b.Min);

        var c = acc.Threads[C].ReadyLatency;   // woken 6000 -> 7000, preempted 8000 -> 12000
        Assert.Equal(2, c.Count);
        Assert.Equal(4000, c.Max);
        Assert.Equal(1000, c.Min);
    }

    [Fact]
    public void Wakeup_from_hard_interrupt_is_attributed_to_irq_not_to_the_interrupted_thread()
    {
        var acc = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Waking(2000, 0, A, B, 1).WithFlags(EventFlags.HardIrq),          // timer/IRQ while A runs
            KernelEvent.Waking(2500, 0, A, C, 1).WithFlags(EventFlags.SoftIrq | EventFlags.IrqsOff),
            // A itself, irqs off: thread context
            KernelEvent.Waking(3000, 0, A, C, 1).WithFlags(EventFlags.IrqsOff),
            KernelEvent.Waking(3500, 1, 0, B, 1),                                         // from idle
            KernelEvent.Switch(4000, 0, A, 120, S, 0, 120));

        var a = acc.Threads[A];
        Assert.Equal(1, a.WakeupsGiven);                                  // only the thread-context one
        Assert.Equal(2, acc.Threads[B].WakeupsReceived);
        Assert.Equal(new Dictionary<int, long> { [-1] = 2 }, acc.Threads[B].Wakers);
        Assert.Equal(new Dictionary<int, long> { [-1] = 1, [A] = 1 }, acc.Threads[C].Wakers);
        Assert.Equal(0, acc.ChainBreaks);                                 // interrupt context does not break the chain
        Assert.Equal(3000, a.RunNs);
    }

    [Fact]
    public void A_waking_logged_before_the_switch_out_makes_the_thread_runnable_not_blocked()
    {
        // B wakes A at 100 while A is still on CPU; A's switch-out (sleeping) follows at 105; A is switched in at 130.
        // ETW logs ReadyThread before the readied thread's CSwitch (the wait reason says so); Linux's waker CPU can log
        // sched_waking before the sleeper's CPU logs sched_switch (try_to_wake_up found it dequeued, still on CPU).
        // Either way A waited 0 and was ready 105 → 130.
        const int A = 1, B = 2, UserRequest = 6;
        KernelEvent[] Trace(int reason) =>
        [
            KernelEvent.Switch(0, 0, 0, 120, TaskState.Running, A, 120, reason),
            KernelEvent.Switch(0, 1, 0, 120, TaskState.Running, B, 120, reason),
            KernelEvent.Waking(100, 1, B, A, 0),
            KernelEvent.Switch(105, 0, A, 120, TaskState.Interruptible, 0, 120, reason),
            KernelEvent.Switch(130, 0, 0, 120, TaskState.Running, A, 120, reason),
        ];
        var etw = EventScript.Run(Trace(UserRequest)).Threads[A];
        Assert.Equal((0L, 25L), (etw.WaitNs, etw.ReadyNs));
        var linux = EventScript.Run(Trace(-1)).Threads[A];
        Assert.Equal((0L, 25L), (linux.WaitNs, linux.ReadyNs));
        Assert.Equal(1, linux.ReadyLatency.Count);
    }

    [Fact]
    public void On_linux_a_second_waking_after_the_switch_out_shows_the_first_found_the_thread_still_running()
    {
        // B wakes A at 100 while A runs (A's futex wait returned at once), A goes on and sleeps again at 105; the
        // waking at 120 ends that new wait; A runs at 130: wait 105 → 120, ready 120 → 130.
        const int A = 1, B = 2;
        var a = EventScript.Run(
        [
            KernelEvent.Switch(0, 0, 0, 120, TaskState.Running, A, 120),
            KernelEvent.Switch(0, 1, 0, 120, TaskState.Running, B, 120),
            KernelEvent.Waking(100, 1, B, A, 0),
            KernelEvent.Switch(105, 0, A, 120, TaskState.Interruptible, 0, 120),
            KernelEvent.Waking(120, 1, B, A, 0),
            KernelEvent.Switch(130, 0, 0, 120, TaskState.Running, A, 120),
        ]).Threads[A];
        Assert.Equal((15L, 10L), (a.WaitNs, a.ReadyNs));
    }
}
