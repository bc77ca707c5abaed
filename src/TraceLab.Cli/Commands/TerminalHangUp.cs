using System.Runtime.InteropServices;

namespace TraceLab.Cli.Commands;

/// <summary>
/// After SIGHUP the terminal is gone and every write to it fails (EIO), which .NET turns into an IOException on the
/// next line of progress or report: standard output and error that were the terminal are pointed at /dev/null, so
/// the run can still stop cleanly and write its files. Output redirected to a file or pipe is left alone.
/// </summary>
internal sealed partial class TerminalHangUp
{
    private const int OWriteOnly = 1;

    // Which of stdout/stderr are the terminal, asked before any hang-up: a hung-up terminal no longer says it is one.
    private readonly int[] _terminalFds =
        OperatingSystem.IsWindows() ? [] : [.. new[] { 1, 2 }.Where(fd => IsATty(fd) == 1)];

    public void SilenceTerminalOutput()
    {
        if (_terminalFds.Length == 0) return;
        var devNull = Open("/dev/null", OWriteOnly);
        if (devNull < 0) return;
        // Best effort: if a descriptor cannot be replaced, writes to it fail as they would have anyway.
        foreach (var fd in _terminalFds) _ = Dup2(devNull, fd);
        _ = Close(devNull);
    }

    [LibraryImport("libc", EntryPoint = "open", StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "isatty")]
    private static partial int IsATty(int fd);

    [LibraryImport("libc", EntryPoint = "dup2")]
    private static partial int Dup2(int from, int to);

    [LibraryImport("libc", EntryPoint = "close")]
    private static partial int Close(int fd);
}
