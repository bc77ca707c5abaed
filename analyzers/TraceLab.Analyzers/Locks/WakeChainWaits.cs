using TraceLab.Core;
using TraceLab.Core.Syscalls;

namespace TraceLab.Analyzers.Locks;

/// <summary>
/// The object one wait of a wake chain parks on (docs/metrics.md#wake-chains): a futex address, an epoll instance,
/// a System V semaphore set, or the process's own poll/select. <see cref="Process"/> 0 for system-wide objects.
/// </summary>
public readonly record struct WakeChainWaitObject(int Syscall, long Id, int Process);

/// <summary>
/// Which syscall entries are waits a wake chain can pass through (docs/metrics.md#wake-chains): the blocking waits
/// on an object of the waiter's own (a futex or semaphore of its own, a latch in an event loop), as opposed to the
/// shared lock object <see cref="LockOperation"/> names.
/// </summary>
public static class WakeChainWaits
{
    private const int FutexCmdMask = 0x7F;
    private const int FutexPrivateFlag = 128;

    /// <summary>
    /// True when <paramref name="enter"/> starts such a wait; <paramref name="operation"/> tells waits of one syscall
    /// apart (the futex command; 0 otherwise) and <paramref name="obj"/> is what it parks on, per process where the
    /// kernel's name for it is (<paramref name="process"/>: the waiter's process).
    /// </summary>
    public static bool IsWait(in KernelEvent enter, int process, out int operation, out WakeChainWaitObject obj)
    {
        operation = 0;
        var nr = enter.SyscallNumber;
        switch (nr)
        {
            case LinuxSyscalls.Futex:
                operation = (int)(enter.SyscallArg1 & FutexCmdMask);
                // WAIT and WAIT_BITSET: a semaphore or condition word; PI locks are shared lock words by design.
                if (operation is not (0 or 9)) break;
                obj = new WakeChainWaitObject(nr, enter.SyscallArg0,
                    (enter.SyscallArg1 & FutexPrivateFlag) != 0 ? process : 0);
                return true;
            case LinuxSyscalls.FutexWait:
                obj = new WakeChainWaitObject(nr, enter.SyscallArg0, (enter.SyscallArg3 & 128) != 0 ? process : 0);
                return true;
            case LinuxSyscalls.EpollWait or LinuxSyscalls.EpollPwait or LinuxSyscalls.EpollPwait2:
                // One syscall family: glibc picks epoll_pwait or epoll_wait for the same call site.
                obj = new WakeChainWaitObject(LinuxSyscalls.EpollWait, enter.SyscallArg0, process);
                return true;
            case LinuxSyscalls.Poll or LinuxSyscalls.Ppoll:
                obj = new WakeChainWaitObject(LinuxSyscalls.Poll, 0, process);
                return true;
            case LinuxSyscalls.Select or LinuxSyscalls.Pselect6:
                obj = new WakeChainWaitObject(LinuxSyscalls.Select, 0, process);
                return true;
            case LinuxSyscalls.Semop or LinuxSyscalls.Semtimedop:
                obj = new WakeChainWaitObject(LinuxSyscalls.Semop, enter.SyscallArg0, 0);
                return true;
        }
        obj = default;
        return false;
    }

    /// <summary>"epoll_wait", "futex WAIT_BITSET", …: the wait as a name says it.</summary>
    public static string Describe(int syscall, int operation) => syscall switch
    {
        LinuxSyscalls.Futex => operation == 9 ? "futex WAIT_BITSET" : "futex WAIT",
        _ => LinuxSyscalls.Name(syscall),
    };
}
