using TraceLab.Analyzers.Locks;
using TraceLab.Core;
using TraceLab.Core.Syscalls;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// <see cref="LockOperation.Classify"/>: the operation a syscall entry is on a lock object, and the object with its
/// scope (docs/metrics.md#lock-objects): private futexes per process, shared ones and System V semaphores
/// system-wide.
/// </summary>
public sealed class LockOperationTests
{
    private static KernelEvent Enter(int nr, long arg0 = 0, long arg1 = 0, long arg3 = 0) =>
        KernelEvent.SyscallEnter(1, 0, 10, nr, arg0, arg1, 0, arg3);

    [Fact]
    public void Classify_names_the_object_and_its_scope()
    {
        Assert.Equal(LockOpKind.Wait, LockOperation.Classify(Enter(LinuxSyscalls.Futex, 0x1000, 128), out var priv));
        Assert.Equal(new LockObject(LockObjectKind.Futex, 0x1000, LockObject.PerProcess), priv);
        Assert.Equal(LockOpKind.Wake, LockOperation.Classify(Enter(LinuxSyscalls.Futex, 0x1000, 1), out var shared));
        Assert.Equal(new LockObject(LockObjectKind.Futex, 0x1000, 0), shared);
        Assert.Equal(LockOpKind.Semop, LockOperation.Classify(Enter(LinuxSyscalls.Semop, 7), out var sem));
        Assert.Equal(new LockObject(LockObjectKind.SysVSemaphore, 7), sem);
        var futexWake = Enter(LinuxSyscalls.FutexWake, 0x2000, arg3: 128);
        Assert.Equal(LockOpKind.Wake, LockOperation.Classify(futexWake, out var f2));
        Assert.Equal(new LockObject(LockObjectKind.Futex, 0x2000, LockObject.PerProcess), f2);
        Assert.Equal(LockOpKind.Other, LockOperation.Classify(Enter(LinuxSyscalls.Futex, 0x1000, 8), out _));
    }
}
