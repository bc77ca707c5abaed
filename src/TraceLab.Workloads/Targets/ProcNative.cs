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
