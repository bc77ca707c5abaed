using System.Diagnostics;
using System.Globalization;
using TraceLab.Core.Capture;

namespace TraceLab.Capture.Linux;

/// <summary>
/// A tiny `sh` process that outlives TraceLab to clean up after it. It reads a pipe whose only write end TraceLab
/// holds (.NET opens it close-on-exec, so no other child inherits it): when TraceLab exits, however it dies (SIGKILL
/// included), the kernel closes that end, the guard's read returns end-of-file, and within milliseconds it kills the
/// processes it was told to take down (built-in workloads), switches the instance's tracing off and removes the
/// instance. A normal run removes the instance itself first, so the guard then finds nothing to do.
/// It ignores SIGINT/SIGTERM/SIGHUP: Ctrl-C reaches the whole foreground process group, and the guard must survive it.
/// </summary>
public sealed class CaptureGuard : ICaptureGuard, IDisposable
{
    /// <summary>How long the guard keeps retrying rmdir while a dying workload still holds trace_marker open.</summary>
    public const int RemoveAttempts = 200;

    // $1 = the instance directory, ours to remove only after "a" (so a name clash never removes someone else's).
    // "k PID" arms a kill, "u PID" disarms it; end-of-file means TraceLab is gone. A built-in workload started but
    // not yet announced with "k" when TraceLab died is found by its argv, which names this instance's trace_marker
    // (--marker); a user's program learns the path from its environment only, which the scan does not look at. The
    // pattern's [r] keeps grep from matching its own command line.
    private const string Script = """
        trap '' INT TERM HUP QUIT
        exec >/dev/null 2>&1
        inst=$1
        pids=
        armed=
        while read -r cmd arg; do
          case $cmd in
            a) armed=1 ;;
            k) pids="$pids $arg" ;;
            u) rest=; for p in $pids; do [ "$p" = "$arg" ] || rest="$rest $p"; done; pids=$rest ;;
          esac
        done
        for p in $pids; do kill -KILL "$p"; done
        if [ -n "$armed" ]; then
          for f in $(grep -lsa -e "$inst/trace_marke[r]" /proc/[0-9]*/cmdline); do
            p=${f#/proc/}; kill -KILL "${p%/cmdline}"
          done
        fi
        if [ -n "$armed" ] && [ -d "$inst" ]; then
          { echo 0 > "$inst/tracing_on"; } 2>/dev/null
          { echo 0 > "$inst/events/enable"; } 2>/dev/null
          n=0
          while [ -d "$inst" ] && [ $n -lt 200 ]; do rmdir "$inst" 2>/dev/null || sleep 0.05; n=$((n+1)); done
        fi
        """;

    private readonly Core.Capture.GuardPipe _pipe;

    // It exits at once when the instance is already gone; do not hold the run up if it is still retrying.
    private CaptureGuard(Process process) =>
        _pipe = new Core.Capture.GuardPipe(process, TimeSpan.FromSeconds(2));

    public int Pid => _pipe.Pid;

    /// <summary>Starts the guard for <paramref name="instancePath"/> (which may not exist yet).</summary>
    public static CaptureGuard Start(string instancePath)
    {
        OpenMissingStandardDescriptors();
        var psi = new ProcessStartInfo("/bin/sh")
        {
            RedirectStandardInput = true,
            UseShellExecute = false,
            WorkingDirectory = "/",
        };
        psi.ArgumentList.Add("-c");
        psi.ArgumentList.Add(Script);
        psi.ArgumentList.Add("tracelab-guard");
        psi.ArgumentList.Add(instancePath);
        try
        {
            var p = Process.Start(psi)
                ?? throw new TracingUnavailableException("cannot start the capture guard (/bin/sh)");
            p.StandardInput.AutoFlush = true;
            return new CaptureGuard(p);
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            throw new TracingUnavailableException($"cannot start the capture guard /bin/sh: {ex.Message}", ex);
        }
    }

    /// <summary>
    /// The instance is about to be made and is ours: from here on the guard removes it if TraceLab dies.
    /// </summary>
    public void Arm() => Send("a");

    /// <summary>
    /// A TraceLab started with stdin (or stdout/stderr) closed would get the guard pipe as fd 0, and the child's
    /// descriptor shuffle would then hand the guard a closed stdin: it would see end-of-file at once and never guard.
    /// Parking /dev/null on the free low descriptors keeps the pipe above them.
    /// </summary>
    private static void OpenMissingStandardDescriptors()
    {
        for (var fd = 0; fd <= 2; fd++)
        {
            if (Libc.Fcntl(fd, Libc.F_GETFD) >= 0) continue;
            // open() returns the lowest free descriptor: this one.
            Libc.Open("/dev/null", fd == 0 ? Libc.O_RDONLY : 1);
        }
    }

    public void KillWithCapture(int pid) => Send($"k {pid.ToString(CultureInfo.InvariantCulture)}");

    public void Release(int pid) => Send($"u {pid.ToString(CultureInfo.InvariantCulture)}");

    private void Send(string line) => _pipe.Send(line);

    /// <summary>Closes the pipe (the guard then cleans whatever is left and exits) and waits briefly for it.</summary>
    public void Dispose() => _pipe.Dispose();
}
