using TraceLab.Analyzers.Parallel;
using TraceLab.Core;

namespace TraceLab.Tests.Analyzers;

/// <summary>Every kind's factory and named accessors agree, and survive the packed hand-off between threads.</summary>
public sealed class KernelEventModelTests
{
    private static KernelEvent ThroughPacking(KernelEvent e)
    {
        var packed = new PackedEvents(1);
        packed.Add(e);
        var back = default(KernelEvent);
        packed.Read(0, ref back);
        Assert.Equal(e, back);
        return back;
    }

    [Fact]
    public void Switch_names_both_threads_and_the_wait_reason()
    {
        var e = ThroughPacking(
            KernelEvent.Switch(10, 1, 100, 120, TaskState.Interruptible, 200, 110, prevWaitReason: 255));
        Assert.Equal(
            (100, 120, TaskState.Interruptible, 200, 110), (e.PrevTid, e.PrevPrio, e.PrevState, e.NextTid, e.NextPrio));
        Assert.True(e.HasPrevWaitReason);
        Assert.Equal(255, e.PrevWaitReason);
        var linux = KernelEvent.Switch(10, 1, 100, 120, 0, 200, 110);
        Assert.False(linux.HasPrevWaitReason);
        Assert.Equal(-1, linux.PrevWaitReason);
        Assert.Equal(0, KernelEvent.Switch(10, 1, 100, 120, 0, 200, 110, prevWaitReason: 0).PrevWaitReason);
    }

    [Fact]
    public void Wakeups_migrations_forks_execs_and_exits_have_named_fields()
    {
        var w = ThroughPacking(KernelEvent.Waking(1, 0, 5, 6, 3, wokenPrio: 100));
        Assert.Equal((5, 6, 3, 100), (w.CurrentTid, w.WokenTid, w.TargetCpu, w.WokenPrio));
        var n = ThroughPacking(KernelEvent.WakeupNew(1, 0, 5, 7, 2));
        Assert.Equal((KernelEventKind.WakeupNew, 7, 2), (n.Kind, n.WokenTid, n.TargetCpu));
        var m = ThroughPacking(KernelEvent.Migrate(1, 0, 5, 8, 1, 2, prio: 120));
        Assert.Equal((8, 1, 2, 120), (m.MigratingTid, m.OrigCpu, m.DestCpu, m.MigratingPrio));
        var f = ThroughPacking(KernelEvent.Fork(1, 0, 5, 9));
        Assert.Equal((5, 9), (f.ParentTid, f.ChildTid));
        var x = ThroughPacking(KernelEvent.Exec(1, 0, 9, 9, 10, "/bin/true"));
        Assert.Equal((9, 10, "/bin/true"), (x.ExecTid, x.OldExecTid, x.ExecFileName));
        var q = ThroughPacking(KernelEvent.Exit(1, 0, 9, prio: 120));
        Assert.Equal((9, 120), (q.ExitingTid, q.ExitingPrio));
        var k = ThroughPacking(KernelEvent.Marker(1, 0, 5, "tracelab: region begin"));
        Assert.Equal("tracelab: region begin", k.MarkerText);
    }

    [Fact]
    public void Syscalls_carry_a_number_on_linux_and_an_address_on_windows()
    {
        var enter = ThroughPacking(KernelEvent.SyscallEnter(1, 0, 5, 202, 0x1000, 128, 1, 0));
        Assert.True(enter.HasSyscallNumber);
        Assert.Equal((202, 0x1000L, 128L, 1L, 0L, 0L), (enter.SyscallNumber, enter.SyscallArg0, enter.SyscallArg1,
            enter.SyscallArg2, enter.SyscallArg3, enter.SyscallAddress));
        var etw = ThroughPacking(KernelEvent.SyscallEnterAt(1, 0, 5, unchecked((long)0xFFFFF80012345678)));
        Assert.False(etw.HasSyscallNumber);
        Assert.Equal(unchecked((long)0xFFFFF80012345678), etw.SyscallAddress);
        var exit = ThroughPacking(KernelEvent.SyscallExit(1, 0, 5, 202, -11));
        Assert.Equal((202, -11L), (exit.SyscallNumber, exit.SyscallResult));
    }
}
