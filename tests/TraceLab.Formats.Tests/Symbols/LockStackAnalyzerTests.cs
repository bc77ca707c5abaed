using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Core.Syscalls;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>
/// Blocking, releasing and off-CPU stacks on a hand-built trace with known sums (docs/metrics.md#stacks).
/// </summary>
public sealed class LockStackAnalyzerTests
{
    private const long Lock = 0x5000;

    [Fact]
    public void Waits_wakes_and_switch_outs_are_charged_to_their_stacks()
    {
        var a = new LockStackAnalyzer(tid => 1);
        // Thread 2 waits on the lock (stack 1) from 100 to 200; thread 3 wakes it (stack 2) at 160.
        a.OnEvent(KernelEvent.SyscallEnter(100, 0, 2, LinuxSyscalls.Futex, Lock, 128).WithStack(1));
        a.OnEvent(KernelEvent.Switch(110, 0, 2, 120, TaskState.Interruptible, 3, 120).WithStack(3));
        a.OnEvent(KernelEvent.SyscallEnter(150, 0, 3, LinuxSyscalls.Futex, Lock, 129).WithStack(2));
        var irq = KernelEvent.Waking(155, 0, 3, 2, 1);
        irq.Flags = EventFlags.HardIrq;
        a.OnEvent(irq);
        a.OnEvent(KernelEvent.Waking(160, 0, 3, 2, 1));
        a.OnEvent(KernelEvent.SyscallExit(170, 0, 3, LinuxSyscalls.Futex, 1));
        a.OnEvent(KernelEvent.Switch(190, 1, 0, 120, TaskState.Running, 2, 120));
        a.OnEvent(KernelEvent.SyscallExit(200, 1, 2, LinuxSyscalls.Futex, 0));
        // A wait that nobody wakes (a timeout) has a blocking stack and no releasing one.
        a.OnEvent(KernelEvent.SyscallEnter(300, 1, 2, LinuxSyscalls.Futex, Lock, 128).WithStack(1));
        a.OnEvent(KernelEvent.SyscallExit(340, 1, 2, LinuxSyscalls.Futex, -110));

        var l = a.Locks[new LockAddress(1, Lock)];
        Assert.Equal(2, l.Waits);
        Assert.Equal(140, l.WaitNanoseconds);
        Assert.Equal((2L, 140L), (l.Blocking[1].Count, l.Blocking[1].Nanoseconds));
        Assert.Equal((1L, 100L), (l.Releasing[2].Count, l.Releasing[2].Nanoseconds));
        Assert.Single(l.Releasing);
        Assert.Equal(1, a.InterruptWakeups);
        Assert.Equal(80, a.OffCpu[(1, 3)].Nanoseconds);
        Assert.Equal(80, a.OffCpuByThread[(2, 3)].Nanoseconds);
        Assert.Equal(4, a.EventsWithStacks);
    }

    /// <summary>
    /// Off-CPU time by waker (bcc offwaketime): thread 2 blocks (stack 3) 110 → 190, woken by 3 (waking stack 4); then
    /// blocks (stack 5) 300 → 350 after a waking by 4 (stack 6) logged just before its switch-out; then blocks
    /// (stack 3) 400 → 450 woken by an interrupt.
    /// </summary>
    [Fact]
    public void Off_cpu_time_is_keyed_by_its_waker_and_the_wakers_stack()
    {
        var a = new LockStackAnalyzer(tid => 1);
        a.OnEvent(KernelEvent.Switch(110, 0, 2, 120, TaskState.Interruptible, 3, 120).WithStack(3));
        a.OnEvent(KernelEvent.Waking(160, 0, 3, 2, 1).WithStack(4));
        a.OnEvent(KernelEvent.Switch(190, 1, 0, 120, TaskState.Running, 2, 120));
        a.OnEvent(KernelEvent.Waking(299, 0, 4, 2, 1).WithStack(6));
        a.OnEvent(KernelEvent.Switch(300, 1, 2, 120, TaskState.Interruptible, 0, 120).WithStack(5));
        a.OnEvent(KernelEvent.Switch(350, 1, 0, 120, TaskState.Running, 2, 120));
        a.OnEvent(KernelEvent.Switch(400, 1, 2, 120, TaskState.Interruptible, 0, 120).WithStack(3));
        var irq = KernelEvent.Waking(420, 1, 0, 2, 1).WithStack(7);
        irq.Flags = EventFlags.HardIrq;
        a.OnEvent(irq);
        a.OnEvent(KernelEvent.Switch(450, 1, 0, 120, TaskState.Running, 2, 120));

        Assert.Equal(80, a.OffWake[new OffWakeKey(1, 3, 3, 4)].Nanoseconds);
        Assert.Equal(50, a.OffWake[new OffWakeKey(1, 5, 4, 6)].Nanoseconds);
        Assert.Equal(50, a.OffWake[new OffWakeKey(1, 3, 0, 0)].Nanoseconds);
        Assert.Equal(3, a.OffWake.Count);
        // The same intervals by blocking stack alone.
        Assert.Equal(130, a.OffCpu[(1, 3)].Nanoseconds);
    }

    /// <summary>
    /// Stacks recorded only where threads block and are woken (`trace --stacks`): the wait takes its switch-out's
    /// stack, the wake its waking's; a wait that returns at once has none.
    /// </summary>
    [Fact]
    public void Without_stacks_at_the_lock_calls_the_switch_out_and_the_waking_give_them()
    {
        var a = new LockStackAnalyzer(tid => 1);
        a.OnEvent(KernelEvent.SyscallEnter(100, 0, 2, LinuxSyscalls.Futex, Lock, 128));
        a.OnEvent(KernelEvent.Switch(110, 0, 2, 120, TaskState.Interruptible, 3, 120).WithStack(3));
        a.OnEvent(KernelEvent.SyscallEnter(150, 0, 3, LinuxSyscalls.Futex, Lock, 129));
        a.OnEvent(KernelEvent.Waking(160, 0, 3, 2, 1).WithStack(4));
        a.OnEvent(KernelEvent.SyscallExit(170, 0, 3, LinuxSyscalls.Futex, 1));
        a.OnEvent(KernelEvent.Switch(190, 1, 0, 120, TaskState.Running, 2, 120));
        a.OnEvent(KernelEvent.SyscallExit(200, 1, 2, LinuxSyscalls.Futex, 0));
        // A wait that returns at once (EAGAIN: the word changed) blocks nowhere.
        a.OnEvent(KernelEvent.SyscallEnter(300, 1, 2, LinuxSyscalls.Futex, Lock, 128));
        a.OnEvent(KernelEvent.SyscallExit(305, 1, 2, LinuxSyscalls.Futex, -11));

        var l = a.Locks[new LockAddress(1, Lock)];
        Assert.Equal(2, l.Waits);
        Assert.Equal((1L, 100L), (l.Blocking[3].Count, l.Blocking[3].Nanoseconds));
        Assert.Equal((1L, 5L), (l.Blocking[0].Count, l.Blocking[0].Nanoseconds));
        Assert.Equal((1L, 100L), (l.Releasing[4].Count, l.Releasing[4].Nanoseconds));
        Assert.Single(l.Releasing);
    }

    [Fact]
    public void A_wake_of_another_word_releases_nothing()
    {
        var a = new LockStackAnalyzer(tid => 1);
        a.OnEvent(KernelEvent.SyscallEnter(100, 0, 2, LinuxSyscalls.Futex, Lock, 128).WithStack(1));
        a.OnEvent(KernelEvent.SyscallEnter(150, 0, 3, LinuxSyscalls.Futex, Lock + 8, 129).WithStack(2));
        a.OnEvent(KernelEvent.Waking(160, 0, 3, 2, 1));
        a.OnEvent(KernelEvent.SyscallExit(200, 1, 2, LinuxSyscalls.Futex, 0));
        Assert.Empty(a.Locks[new LockAddress(1, Lock)].Releasing);
    }
}
