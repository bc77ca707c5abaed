using System.Runtime.InteropServices;

namespace TraceLab.Capture.Linux;

/// <summary>
/// The few libc calls .NET's file APIs cannot express: non-blocking opens and poll() on tracefs pipes, and the
/// privilege / liveness checks.
/// </summary>
internal static partial class Libc
{
    public const int O_RDONLY = 0;
    public const int O_NONBLOCK = 0x800;
    public const int O_CLOEXEC = 0x80000;
    public const int EAGAIN = 11;
    public const int EINTR = 4;
    public const int ESRCH = 3;
    public const int EPERM = 1;
    public const short POLLIN = 0x1;

    [StructLayout(LayoutKind.Sequential)]
    public struct PollFd
    {
        public int Fd;
        public short Events;
        public short Revents;
    }

    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    public static partial int Close(int fd);

    [LibraryImport("libc", EntryPoint = "read", SetLastError = true)]
    public static unsafe partial nint Read(int fd, byte* buf, nint count);

    [LibraryImport("libc", EntryPoint = "write", SetLastError = true)]
    public static unsafe partial nint Write(int fd, byte* buf, nint count);

    [LibraryImport("libc", EntryPoint = "mkfifo", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int MakeFifo(string path, uint mode);

    public const int O_RDWR = 2;

    [LibraryImport("libc", EntryPoint = "poll", SetLastError = true)]
    public static unsafe partial int Poll(PollFd* fds, nuint nfds, int timeoutMs);

    [LibraryImport("libc", EntryPoint = "fcntl", SetLastError = true)]
    public static partial int Fcntl(int fd, int cmd);

    public const int F_GETFD = 1;

    [LibraryImport("libc", EntryPoint = "geteuid")]
    public static partial uint GetEuid();

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    public static partial int Kill(int pid, int sig);

    [LibraryImport("libc", EntryPoint = "mount", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int Mount(string source, string target, string fstype, ulong flags, nint data);

    /// <summary>
    /// True when a process with this pid exists (kill(pid, 0) succeeds or fails only for permission).
    /// </summary>
    public static bool ProcessExists(int pid)
    {
        if (Kill(pid, 0) == 0) return true;
        return Marshal.GetLastPInvokeError() == EPERM;
    }

    public static string ErrorText(int errno) => Marshal.GetPInvokeErrorMessage(errno);
}
