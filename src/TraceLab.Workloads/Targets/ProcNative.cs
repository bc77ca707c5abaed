using System.Runtime.InteropServices;

namespace TraceLab.Workloads.Targets;

/// <summary>
/// The Linux process calls .NET does not offer: becoming a child subreaper and reaping orphaned children.
/// </summary>
internal static partial class ProcNative
{
    private const int PR_SET_CHILD_SUBREAPER = 36;
    private const int WNOHANG = 1;

    [LibraryImport("libc", EntryPoint = "prctl", SetLastError = true)]
    private static partial int Prctl(int option, nuint arg2, nuint arg3, nuint arg4, nuint arg5);

    private const int ClockMonotonic = 1;
    private const int ClockBoottime = 7;
    private const int ScClkTck = 2;

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static unsafe partial int ClockGetTime(int clock, long* timespec);

    [LibraryImport("libc", EntryPoint = "sysconf")]
    private static partial long SysConf(int name);

    /// <summary>
    /// The kernel's USER_HZ: /proc/PID/stat times are in these ticks (100 on every Linux port but alpha).
    /// </summary>
    public static long ClockTicksPerSecond() => SysConf(ScClkTck) is var hz and > 0 ? hz : 100;

    /// <summary>
    /// CLOCK_BOOTTIME − CLOCK_MONOTONIC now, in ns: the time the machine spent suspended. /proc/PID/stat start times
    /// count on the first, the trace ("mono" trace clock) on the second.
    /// </summary>
    public static unsafe long BootToMonotonicNs()
    {
        long* boot = stackalloc long[2];
        long* mono1 = stackalloc long[2];
        long* mono2 = stackalloc long[2];
        // Monotonic read on both sides of the boot read: the offset is then exact to the reads' own duration. A
        // kernel without CLOCK_BOOTTIME (before 2.6.39) has no suspend to take off: 0.
        if (ClockGetTime(ClockMonotonic, mono1) != 0 || ClockGetTime(ClockBoottime, boot) != 0
            || ClockGetTime(ClockMonotonic, mono2) != 0)
            return 0;
        var monoNs = (mono1[0] * 1_000_000_000 + mono1[1] + mono2[0] * 1_000_000_000 + mono2[1]) / 2;
        return boot[0] * 1_000_000_000 + boot[1] - monoNs;
    }

    private const int RusageChildren = -1;

    [LibraryImport("libc", EntryPoint = "getrusage")]
    private static unsafe partial int GetRusage(int who, long* usage);

    /// <summary>
    /// getrusage(RUSAGE_CHILDREN): CPU time and context switches of every child this process has waited for, with
    /// the children those waited for in turn; null when the call fails. A 64-bit struct rusage: two timevals, then 14
    /// longs, the last two ru_nvcsw and ru_nivcsw.
    /// </summary>
    public static unsafe ChildrenUsage? WaitedChildrenUsage()
    {
        if (!OperatingSystem.IsLinux() || IntPtr.Size != 8) return null;
        long* u = stackalloc long[18];
        if (GetRusage(RusageChildren, u) != 0) return null;
        return new ChildrenUsage(u[0] * 1_000_000_000 + u[1] * 1_000, u[2] * 1_000_000_000 + u[3] * 1_000,
            u[16], u[17]);
    }

    [LibraryImport("libc", EntryPoint = "waitpid", SetLastError = true)]
    private static unsafe partial int WaitPid(int pid, int* status, int options);

    /// <summary>
    /// Orphans of the traced program's tree re-parent to this process instead of init, so "its children" stay
    /// findable by parent pid even after the process that forked them exits. False when the kernel refuses.
    /// </summary>
    public static bool BecomeSubreaper() => OperatingSystem.IsLinux() && Prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;

    /// <summary>
    /// Reaps an exited orphan that re-parented to us (never a child .NET itself started and waits for).
    /// </summary>
    public static unsafe void Reap(int pid)
    {
        int status;
        WaitPid(pid, &status, WNOHANG);
    }
}

/// <summary>CPU time (ns) and context switches, as getrusage reports them.</summary>
internal readonly record struct ChildrenUsage(long UserNs, long SystemNs, long VoluntarySwitches,
    long InvoluntarySwitches)
{
    public static ChildrenUsage operator -(ChildrenUsage a, ChildrenUsage b) => new(a.UserNs - b.UserNs,
        a.SystemNs - b.SystemNs, a.VoluntarySwitches - b.VoluntarySwitches,
        a.InvoluntarySwitches - b.InvoluntarySwitches);
}
