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
    /// <summary>raw_syscalls:sys_enter/sys_exit: every syscall; costs the most (one pair of events per syscall of every process).</summary>
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

    public static readonly string[] AllSyscalls = ["raw_syscalls/sys_enter", "raw_syscalls/sys_exit"];

    public static IReadOnlyList<string> For(SyscallSet syscalls) => syscalls switch
    {
        SyscallSet.None => Scheduler,
        SyscallSet.Lock => [.. Scheduler, .. LockSyscalls],
        SyscallSet.All => [.. Scheduler, .. AllSyscalls],
        _ => throw new ArgumentOutOfRangeException(nameof(syscalls)),
    };

    public static SyscallSet Parse(string text) => text.ToLowerInvariant() switch
    {
        "none" => SyscallSet.None,
        "lock" => SyscallSet.Lock,
        "all" => SyscallSet.All,
        _ => throw new ArgumentException($"unknown syscall set '{text}': use none, lock or all"),
    };
}
