using TraceLab.Core;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// Switches that were never logged (docs/metrics.md#chain-break-repair): the chain is repaired from common_pid.
/// </summary>
public sealed class ChainBreakRepairTests
{
    private const int X = 100, Y = 200, W = 300;
    private const long S = TaskState.Interruptible, R = TaskState.Running;

    /// <summary>
    /// cpu1: X runs, switches to idle at t1; Y is woken (from cpu0) at t2 targeting cpu1; the idle→Y switch is lost;
    /// Y's next event on cpu1 (a syscall at 3000) shows it running; Y switches to idle at t3 = 4000.
    /// Y cannot have started before idle was last seen on cpu1 (t1) nor before it was woken (t2).
    /// </summary>
    [Theory]
    [InlineData(2000, 2500)]   // woken after the CPU went idle
    [InlineData(2000, 1500)]   // woken before the CPU went idle
    [InlineData(2000, 2000)]
    public void Missing_idle_to_task_switch_starts_the_thread_at_the_later_of_idle_and_wakeup(long t1, long t2)
    {
        const long t3 = 4000;
        var events = new List<KernelEvent>
        {
            KernelEvent.Switch(1000, 0, 0, 120, R, W, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, X, 120),
            KernelEvent.Switch(t1, 1, X, 120, S, 0, 120),
            KernelEvent.Waking(t2, 0, W, Y, 1),
            SyscallBy(3000, 1, Y),                          // first sign of Y on cpu1: no switch named it
            KernelEvent.Switch(t3, 1, Y, 120, S, 0, 120),
        };
        events.Sort((p, q) => p.Timestamp.CompareTo(q.Timestamp));
        var acc = Run([.. events]);

        var y = acc.Threads[Y];
        Assert.Equal(t3 - Math.Max(t1, t2), y.RunNs);
        Assert.Equal(Math.Max(t1, t2) - t2, y.ReadyNs);
        Assert.Equal(1, y.RepairedStarts);
        Assert.Equal(1, y.VoluntarySwitches);
        Assert.Equal(1, acc.ChainBreaks);
        Assert.Equal(1, acc.ChainBreaksInRegion);
        Assert.Equal(t1 - 1000, acc.Threads[X].RunNs);
        Assert.Equal(0, acc.Threads[X].RepairedStarts);
        Assert.Equal(0, y.ReadyLatency.Count);               // the switch-in was not logged: no latency sample
    }

    [Fact]
    public void Lost_switch_between_two_threads_ends_the_previous_one_at_its_last_sighting()
    {
        // cpu0: A runs from 1000, last seen at 2000 (syscall); B was woken at 1500; the A→B switch is lost;
        // B is seen at 3000, so it started at max(2000, 1500) = 2000. B sleeps at 4000 and the switch names A as next.
        const int A = X, B = Y;
        var acc = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Waking(1500, 0, A, B, 0),
            SyscallBy(2000, 0, A),
            SyscallBy(3000, 0, B),
            KernelEvent.Switch(4000, 0, B, 120, S, A, 120),
            KernelEvent.Switch(5000, 0, A, 120, S, 0, 120));

        Assert.Equal(1, acc.ChainBreaks);
        var a = acc.Threads[A];
        var b = acc.Threads[B];
        Assert.Equal((2000 - 1000) + (5000 - 4000), a.RunNs);
        Assert.Equal(4000 - 2000, b.RunNs);
        Assert.Equal(2000 - 1500, b.ReadyNs);
        Assert.Equal(1, b.RepairedStarts);
        Assert.Equal(0, a.RepairedStarts);
        Assert.Equal(1, b.VoluntarySwitches);
        Assert.Equal(1, a.VoluntarySwitches);
    }

    [Fact]
    public void Lost_switch_out_on_another_cpu_ends_the_run_there_at_the_last_sighting()
    {
        // A runs on cpu0 from 1000 and is last seen there at 2000; its switch-out on cpu0 is lost; a switch on cpu1
        // at 3000 names A as next (it migrated). A's cpu0 interval ends at 2000, its cpu1 interval starts at 3000.
        const int A = X;
        var acc = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            SyscallBy(2000, 0, A),
            KernelEvent.Switch(2500, 1, 0, 120, R, W, 120),
            KernelEvent.Switch(3000, 1, W, 120, S, A, 120),
            KernelEvent.Switch(4000, 1, A, 120, S, 0, 120));

        Assert.Equal((2000 - 1000) + (4000 - 3000), acc.Threads[A].RunNs);
        Assert.Equal(500, acc.Threads[W].RunNs);
    }

    [Fact]
    public void Waking_logged_before_the_sleepers_switch_out_does_not_start_it_before_that_switch_out()
    {
        // The kernel logs sched_waking when the waker calls try_to_wake_up, which can be before the sleeper's own
        // switch-out: W wakes Y at 3000 while Y still runs on cpu1 until 10000. cpu0 went idle at 5000 and logs no
        // idle→Y switch; Y is seen there at 20000. Y cannot have started on cpu0 before it left cpu1 (10000),
        // although both the waking and cpu0's last sighting are earlier: its run is never counted on two CPUs at once.
        var acc = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, W, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, Y, 120),
            KernelEvent.Waking(3000, 0, W, Y, 0),
            KernelEvent.Switch(5000, 0, W, 120, S, 0, 120),
            KernelEvent.Switch(10_000, 1, Y, 120, S, 0, 120),
            SyscallBy(20_000, 0, Y),
            KernelEvent.Switch(30_000, 0, Y, 120, S, 0, 120));

        var y = acc.Threads[Y];
        Assert.Equal((10_000 - 1000) + (30_000 - 10_000), y.RunNs);
        Assert.Equal(0, y.WaitNs);
        Assert.Equal(1, y.RepairedStarts);
        Assert.Equal(1, acc.ChainBreaks);
    }
}
