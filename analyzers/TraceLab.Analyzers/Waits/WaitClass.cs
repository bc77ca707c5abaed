namespace TraceLab.Analyzers.Waits;

/// <summary>
/// What a blocked interval waited for (docs/metrics.md#wait-classes). The order is the report's column order.
/// </summary>
public enum WaitClass
{
    /// <summary>A mutex, rwlock, semaphore or latch another thread holds and releases to this one.</summary>
    Lock,
    /// <summary>
    /// An event with no holder: an idle pool worker, a queue consumer, a barrier, a join, a timed wait.
    /// </summary>
    Condition,
    /// <summary>Sockets, pipes, files, disk, event loops (read, recv, accept, poll, epoll_wait, select).</summary>
    Io,
    /// <summary>Making data durable: fsync, fdatasync, sync_file_range, msync.</summary>
    Commit,
    /// <summary>A requested sleep: nanosleep, clock_nanosleep.</summary>
    Sleep,
    /// <summary>Memory management: mmap, munmap, brk, madvise, page-in (ETW paging wait reasons).</summary>
    Memory,
    /// <summary>Nothing in the trace says: no syscall open (or not recorded), or one outside every rule.</summary>
    Unknown,
}

/// <summary>Names and the count of <see cref="WaitClass"/> values.</summary>
public static class WaitClasses
{
    /// <summary>Number of classes (arrays indexed by class have this length).</summary>
    public const int Count = 7;

    /// <summary>Every class in report order.</summary>
    public static IReadOnlyList<WaitClass> All { get; } =
    [
        WaitClass.Lock, WaitClass.Condition, WaitClass.Io, WaitClass.Commit, WaitClass.Sleep, WaitClass.Memory,
        WaitClass.Unknown,
    ];

    /// <summary>The name report.json and the tables use ("lock", "condition", "io", ...).</summary>
    public static string Name(WaitClass c) => c switch
    {
        WaitClass.Lock => "lock",
        WaitClass.Condition => "condition",
        WaitClass.Io => "io",
        WaitClass.Commit => "commit",
        WaitClass.Sleep => "sleep",
        WaitClass.Memory => "memory",
        _ => "unknown",
    };
}
