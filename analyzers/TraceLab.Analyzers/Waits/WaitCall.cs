using TraceLab.Core.Syscalls;

namespace TraceLab.Analyzers.Waits;

/// <summary>
/// The family of the syscall a thread was in when it blocked: the first input of the wait classification.
/// </summary>
public enum WaitCall : byte
{
    /// <summary>No syscall open at the switch-out, or the capture did not record it.</summary>
    None,
    /// <summary>futex FUTEX_WAIT, WAIT_BITSET, futex_wait (futex2), futex_waitv.</summary>
    FutexWait,
    /// <summary>futex LOCK_PI, LOCK_PI2, WAIT_REQUEUE_PI: the kernel's priority-inheritance mutexes.</summary>
    FutexLockPi,
    /// <summary>semop, semtimedop.</summary>
    Semop,
    /// <summary>flock, fcntl (F_SETLKW is the one that blocks): file locks.</summary>
    FileLock,
    /// <summary>epoll_wait, epoll_pwait, epoll_pwait2, poll, ppoll, select, pselect6.</summary>
    Multiplex,
    /// <summary>
    /// read, write, recv, send, accept, connect, open, splice, io_getevents, io_uring_enter, msgrcv...
    /// </summary>
    Io,
    /// <summary>fsync, fdatasync, sync_file_range, sync, syncfs, msync.</summary>
    Commit,
    /// <summary>nanosleep, clock_nanosleep.</summary>
    Sleep,
    /// <summary>wait4, waitid, pause, rt_sigsuspend, rt_sigtimedwait: a child's exit or a signal.</summary>
    Event,
    /// <summary>mmap, munmap, mprotect, mremap, brk, madvise, mlock.</summary>
    Memory,
    /// <summary>Any other syscall.</summary>
    Other,
}

/// <summary>
/// Maps a syscall entry to its <see cref="WaitCall"/> family (x86-64 numbers, as the trace records them).
/// </summary>
public static class WaitCalls
{
    private const int FutexCmdMask = 0x7F;

    /// <summary>
    /// The family of syscall <paramref name="nr"/>; <paramref name="arg1"/> is its second argument (the futex
    /// operation). <see cref="WaitCall.Other"/> for a number outside every list.
    /// </summary>
    public static WaitCall Of(int nr, long arg1)
    {
        if (nr == LinuxSyscalls.Futex)
        {
            return (arg1 & FutexCmdMask) switch
            {
                6 or 11 or 13 => WaitCall.FutexLockPi,
                _ => WaitCall.FutexWait,
            };
        }
        return nr switch
        {
            LinuxSyscalls.FutexWait or LinuxSyscalls.FutexWaitv => WaitCall.FutexWait,
            LinuxSyscalls.Semop or LinuxSyscalls.Semtimedop => WaitCall.Semop,
            73 or 72 => WaitCall.FileLock, // flock, fcntl
            7 or 23 or 232 or 270 or 271 or 281 or 441 => WaitCall.Multiplex, // poll select epoll_wait pselect6 ppoll
            // read write open readv writev pread64 pwrite64 sendfile accept connect sendto recvfrom sendmsg recvmsg
            0 or 1 or 2 or 19 or 20 or 17 or 18 or 40 or 43 or 42 or 44 or 45 or 46 or 47
                // msgsnd msgrcv io_getevents openat splice tee vmsplice accept4 preadv pwritev recvmmsg sendmmsg
                or 69 or 70 or 208 or 257 or 275 or 276 or 278 or 288 or 295 or 296 or 299 or 307
                // copy_file_range preadv2 pwritev2 io_pgetevents io_uring_enter mq_timedsend mq_timedreceive
                or 326 or 327 or 328 or 333 or 426 or 242 or 243 => WaitCall.Io,
            74 or 75 or 277 or 162 or 306 or 26 => WaitCall.Commit, // fsync fdatasync sync_file_range sync syncfs msync
            35 or 230 => WaitCall.Sleep, // nanosleep clock_nanosleep
            61 or 247 or 34 or 130 or 128 => WaitCall.Event, // wait4 waitid pause rt_sigsuspend rt_sigtimedwait
            9 or 11 or 10 or 25 or 12 or 28 or 149 or 151 or 325 => WaitCall.Memory,
            _ => WaitCall.Other,
        };
    }

    /// <summary>True for the syscalls that send a signal (kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo,
    /// pidfd_send_signal): a thread inside one that wakes another is signalling it.</summary>
    public static bool SendsSignal(int nr) => nr is 62 or 200 or 234 or 129 or 297 or 424;
}
