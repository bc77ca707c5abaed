using TraceLab.Core;
using TraceLab.Core.Syscalls;

namespace TraceLab.Analyzers.Locks;

public enum LockOpKind : byte
{
    /// <summary>Not a syscall on a lock object.</summary>
    None,
    /// <summary>May block until another thread releases the object (futex wait ops, read on an fd).</summary>
    Wait,
    /// <summary>Releases waiters (futex wake ops, write on an fd).</summary>
    Wake,
    /// <summary>semop/semtimedop: acquire or release, which one is in user memory the trace does not have.</summary>
    Semop,
    /// <summary>On a lock object but neither waits nor wakes (e.g. FUTEX_TRYLOCK_PI).</summary>
    Other,
}

/// <summary>Classifies a syscall entry as an operation on a lock object (docs/metrics.md#lock-objects).</summary>
public static class LockOperation
{
    private const int FutexCmdMask = 0x7F; // strips FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256)
    private const int FutexPrivateFlag = 128;
    private const int Futex2Private = 128; // futex_wait/futex_wake (futex2) flags: FUTEX2_PRIVATE

    /// <summary>
    /// Private futexes are per process; shared ones are keyed by the page the kernel resolves: system-wide.
    /// </summary>
    private static int FutexScope(long flags, int privateBit) =>
        (flags & privateBit) != 0 ? LockObject.PerProcess : 0;

    public static LockOpKind Classify(in KernelEvent enter, out LockObject obj)
    {
        obj = default;
        switch (enter.SyscallNumber)
        {
            case LinuxSyscalls.Futex:
                obj = new LockObject(
                    LockObjectKind.Futex, enter.SyscallArg0, FutexScope(enter.SyscallArg1, FutexPrivateFlag));
                return (enter.SyscallArg1 & FutexCmdMask) switch
                {
                    // WAIT, LOCK_PI, WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2
                    0 or 6 or 9 or 11 or 13 => LockOpKind.Wait,
                    // WAKE, (CMP_)REQUEUE, WAKE_OP, UNLOCK_PI, WAKE_BITSET, CMP_REQUEUE_PI
                    1 or 3 or 4 or 5 or 7 or 10 or 12 => LockOpKind.Wake,
                    _ => LockOpKind.Other,
                };
            case LinuxSyscalls.FutexWait:
                obj = new LockObject(
                    LockObjectKind.Futex, enter.SyscallArg0, FutexScope(enter.SyscallArg3, Futex2Private));
                return LockOpKind.Wait;
            case LinuxSyscalls.FutexWake:
                obj = new LockObject(
                    LockObjectKind.Futex, enter.SyscallArg0, FutexScope(enter.SyscallArg3, Futex2Private));
                return LockOpKind.Wake;
            case LinuxSyscalls.Semop:
            case LinuxSyscalls.Semtimedop:
                obj = new LockObject(LockObjectKind.SysVSemaphore, enter.SyscallArg0);
                return LockOpKind.Semop;
            case LinuxSyscalls.Read:
            case LinuxSyscalls.Readv:
                obj = new LockObject(LockObjectKind.FileDescriptor, enter.SyscallArg0, LockObject.PerProcess);
                return LockOpKind.Wait;
            case LinuxSyscalls.Write:
            case LinuxSyscalls.Writev:
                obj = new LockObject(LockObjectKind.FileDescriptor, enter.SyscallArg0, LockObject.PerProcess);
                return LockOpKind.Wake;
            default:
                return LockOpKind.None;
        }
    }

    /// <summary>
    /// ETW wait reasons (KWAIT_REASON) that are waits on a synchronization object another thread of the process can
    /// release; sleeps, queues, paging and preemption reasons are not lock waits.
    /// </summary>
    public static bool IsLockWaitReason(int reason) => reason switch
    {
        -1 => true, // unknown (Linux without syscalls): any voluntary block qualifies
        0 or 6 or 7 or 13 or 21 or 27 or 28 or 29 or 34 or 35 or 37 => true,
        _ => false,
    };
}
