namespace TraceLab.Capture.Linux;

/// <summary>Which syscalls the capture records besides the scheduler events.</summary>
public enum SyscallSet
{
    /// <summary>No syscall events: cheapest; the analyzers cannot name lock objects.</summary>
    None,
    /// <summary>
    /// futex, semop/semtimedop, sched_yield, epoll_wait and kill: names the futex and System V semaphore objects and
    /// the waits of wake chains (eventfd waits need All: read/write).
    /// </summary>
    Lock,
    /// <summary>
    /// Lock plus the blocking syscalls the wait classification reads (epoll/poll/select, recv/accept/connect,
    /// sleeps, fsync, signal sending, child waits; docs/metrics.md#wait-classes): the default of --pid and --system.
    /// Plain read/write are left out (the most frequent syscalls, and TraceLab's own copier reads): use All.
    /// </summary>
    Waits,
    /// <summary>
    /// raw_syscalls:sys_enter/sys_exit: every syscall; costs the most (one pair of events per syscall of every
    /// process).
    /// </summary>
    All,
}

/// <summary>The tracepoints a capture enables, as "system/name".</summary>
public static class CaptureEventSet
{
    public static readonly string[] Scheduler =
    [
        "sched/sched_switch",
        "sched/sched_waking",
        // sched_wakeup is logged when the woken thread is enqueued; for a wakeup of an idle CPU that happens on the
        // target CPU after it left idle, which bounds when the thread started there if its switch-in was not logged.
        "sched/sched_wakeup",
        "sched/sched_wakeup_new",
        "sched/sched_migrate_task",
        "sched/sched_process_fork",
        // Its clone_flags tell a new thread from a new process from the first event on (CLONE_THREAD).
        "task/task_newtask",
        "sched/sched_process_exec",
        "sched/sched_process_exit",
    ];

    public static readonly string[] LockSyscalls =
    [
        "syscalls/sys_enter_futex",
        "syscalls/sys_exit_futex",
        "syscalls/sys_enter_semop",
        "syscalls/sys_exit_semop",
        "syscalls/sys_enter_semtimedop",
        "syscalls/sys_exit_semtimedop",
        "syscalls/sys_enter_sched_yield",
        "syscalls/sys_exit_sched_yield",
        // Latches and event loops: a waiter parked in epoll_wait and released by a peer's kill is a lock found
        // through its wake chain (docs/metrics.md#wake-chains); a kernel without one records the others.
        "syscalls/sys_enter_epoll_wait",
        "syscalls/sys_exit_epoll_wait",
        "syscalls/sys_enter_epoll_pwait",
        "syscalls/sys_exit_epoll_pwait",
        "syscalls/sys_enter_epoll_pwait2",
        "syscalls/sys_exit_epoll_pwait2",
        "syscalls/sys_enter_kill",
        "syscalls/sys_exit_kill",
    ];

    /// <summary>The syscalls <see cref="SyscallSet.Waits"/> adds to <see cref="LockSyscalls"/> (names without the
    /// sys_enter_/sys_exit_ prefix; a kernel without one of them records the rest).</summary>
    public static readonly string[] WaitSyscallNames =
    [
        "poll", "ppoll", "select", "pselect6",
        "recvfrom", "recvmsg", "recvmmsg", "accept", "accept4", "connect", "sendto", "sendmsg",
        "nanosleep", "clock_nanosleep", "fsync", "fdatasync", "sync_file_range",
        "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal",
        "wait4", "waitid", "pause", "rt_sigsuspend", "rt_sigtimedwait",
        "io_getevents", "io_pgetevents", "io_uring_enter", "flock", "msgrcv", "msgsnd",
    ];

    /// <summary>The tracepoints of <see cref="SyscallSet.Waits"/> beyond the lock syscalls.</summary>
    public static readonly string[] WaitSyscalls =
        [.. WaitSyscallNames.SelectMany(n => new[] { "syscalls/sys_enter_" + n, "syscalls/sys_exit_" + n })];

    public static readonly string[] AllSyscalls = ["raw_syscalls/sys_enter", "raw_syscalls/sys_exit"];

    public static IReadOnlyList<string> For(SyscallSet syscalls) => syscalls switch
    {
        SyscallSet.None => Scheduler,
        SyscallSet.Lock => [.. Scheduler, .. LockSyscalls],
        SyscallSet.Waits => [.. Scheduler, .. LockSyscalls, .. WaitSyscalls],
        SyscallSet.All => [.. Scheduler, .. AllSyscalls],
        _ => throw new ArgumentOutOfRangeException(nameof(syscalls)),
    };

    public static SyscallSet Parse(string text) => text.ToLowerInvariant() switch
    {
        "none" => SyscallSet.None,
        "lock" => SyscallSet.Lock,
        "waits" => SyscallSet.Waits,
        "all" => SyscallSet.All,
        _ => throw new ArgumentException($"unknown syscall set '{text}': use none, lock, waits or all"),
    };
}
