using TraceLab.Analyzers.Kernel;

namespace TraceLab.Reporting;

/// <summary>
/// The syscalls in which a thread blocks on a lock object (futex, System V semaphores): what "time blocked on lock
/// objects" sums, for ranking threads (<see cref="ThreadRanking"/>) and processes (<see cref="ProcessesReport"/>).
/// </summary>
public static class LockSyscalls
{
    private static readonly HashSet<string> Names = ["futex", "futex_waitv", "semop", "semtimedop"];

    public static bool Contains(string name) => Names.Contains(name);

    /// <summary>Time the thread was blocked inside lock syscalls.</summary>
    public static long BlockedNs(ThreadKernelStats thread)
    {
        long ns = 0;
        foreach (var s in thread.BySyscall.Values)
            if (Names.Contains(s.Name)) ns += s.BlockedNs;
        return ns;
    }
}
