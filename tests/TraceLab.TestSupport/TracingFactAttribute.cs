using TraceLab.Capture.Linux;
using Xunit;

namespace TraceLab.TestSupport;

/// <summary>
/// A test that captures a real kernel trace. Decided when tests are discovered: where tracing (root + tracefs +
/// sched tracepoints), cmake, a C compiler or trace-cmd is missing, the test is reported SKIPPED with the reason —
/// it never passes silently.
/// </summary>
public sealed class TracingFactAttribute : FactAttribute
{
    /// <param name="needsTmpfs">The test mounts tmpfs file systems (a full or read-only disk).</param>
    public TracingFactAttribute(bool needsTraceCmd = false, bool needsWorkloads = true, bool needsTmpfs = false)
    {
        var reason = TestEnvironment.Reason(needsTraceCmd, needsWorkloads);
        if (reason is null && needsTmpfs) reason = TestEnvironment.Tmpfs.Value;
        if (reason is not null) Skip = reason;
    }
}

/// <summary>
/// A test of Linux-only behaviour (processes, /proc) that needs no tracing; skipped elsewhere, with the reason.
/// </summary>
public sealed class LinuxFactAttribute : FactAttribute
{
    public LinuxFactAttribute()
    {
        if (TestEnvironment.LinuxProcessesReason() is { } reason) Skip = reason;
    }
}

/// <summary>
/// A test that renders a page in headless Chromium; skipped, with the reason, where Chromium is not installed.
/// </summary>
public sealed class ChromiumFactAttribute : FactAttribute
{
    public ChromiumFactAttribute()
    {
        if (TestEnvironment.ChromiumReason() is { } reason) Skip = reason;
    }
}

/// <summary>What the machine lacks for real-capture tests, or null.</summary>
public static class TestEnvironment
{
    private static readonly Lazy<string?> Tracing = new(Tracefs.UnavailableReason);

    /// <summary>What tests of Linux process behaviour (/proc, signals, a shell) lack here, or null.</summary>
    public static string? LinuxProcessesReason() =>
        !OperatingSystem.IsLinux() ? "Linux only (/proc, POSIX signals)"
        : !OnPath("sh") ? "no /bin/sh"
        : null;

    /// <summary>
    /// Why a test of the non-Windows ETW refusal cannot run here (on Windows ETW really opens the file), or null.
    /// </summary>
    public static string? EtwAvailableReason() =>
        OperatingSystem.IsWindows() ? "checks the non-Windows refusal; on Windows ETW is available" : null;

    /// <summary>Debian's Chromium, which the HTML report tests render pages with.</summary>
    public const string ChromiumPath = "/usr/bin/chromium";

    /// <summary>
    /// Why the tracefs locate logic cannot be exercised past its privilege check here (not Linux, not root), or null.
    /// </summary>
    public static string? RootOnLinuxReason() =>
        !OperatingSystem.IsLinux() ? "Linux only (tracefs)"
        : Environment.UserName != "root" ? "needs root: without it tracefs location stops at the privilege check"
        : null;

    /// <summary>Why report.html cannot be rendered here (no Debian chromium), or null.</summary>
    public static string? ChromiumReason() =>
        !OperatingSystem.IsLinux() ? "headless rendering tests use Debian's chromium (Linux)"
        : !File.Exists(ChromiumPath) ? $"{ChromiumPath} not installed (apt-get install -y chromium)"
        : null;

    /// <summary>
    /// Why real ETW kernel sessions cannot be started here (not Windows, not Administrator), or null.
    /// </summary>
    public static string? EtwCaptureReason()
    {
        if (!OperatingSystem.IsWindows())
            return "real ETW kernel sessions need Windows (the Windows workflow runs these)";
        return new TraceLab.Capture.Windows.TraceEventSessionController().IsElevated()
            ? null
            : "ETW kernel sessions need Administrator (run the tests elevated)";
    }

    /// <summary>Why tmpfs cannot be mounted here (tried once per test run), or null.</summary>
    public static readonly Lazy<string?> Tmpfs = new(TmpfsMount.UnavailableReason);

    public static string? Reason(bool needsTraceCmd, bool needsWorkloads = true)
    {
        if (!OperatingSystem.IsLinux()) return "real kernel captures need Linux (tracefs)";
        if (Tracing.Value is { } t) return $"kernel tracing unavailable: {t}";
        if (needsWorkloads && NativeToolsReason(windows: false) is { } native) return native;
        if (needsTraceCmd && !OnPath("trace-cmd")) return "trace-cmd not installed (apt-get install -y trace-cmd)";
        return null;
    }

    /// <summary>What the native workload builds lack: cmake, a C compiler, and for Win32 MinGW-w64 and wine.</summary>
    public static string? NativeToolsReason(bool windows)
    {
        if (!OnPath("cmake")) return "cmake not installed (apt-get install -y cmake)";
        if (!OnPath("cc")) return "no C compiler (apt-get install -y build-essential)";
        if (windows && !OnPath("x86_64-w64-mingw32-gcc"))
            return "MinGW-w64 not installed (apt-get install -y gcc-mingw-w64-x86-64)";
        if (windows && !File.Exists("/usr/lib/wine/wine64") && !OnPath("wine64") && !OnPath("wine"))
            return "wine not installed (apt-get install -y wine64): the Win32 build cannot be run here";
        return null;
    }

    /// <summary>What running a child as an unprivileged user needs: Linux, root to drop from, and setpriv.</summary>
    public static string? UnprivilegedChildReason()
    {
        if (!OperatingSystem.IsLinux()) return "Linux only";
        if (System.Environment.UserName != "root") return "needs root to run a child as an unprivileged user";
        if (!OnPath("setpriv")) return "setpriv not installed (apt-get install -y util-linux)";
        return null;
    }

    public static bool OnPath(string program) =>
        (System.Environment.GetEnvironmentVariable("PATH") ?? "").Split(':')
            .Any(dir => dir.Length > 0 && File.Exists(Path.Combine(dir, program)));
}
