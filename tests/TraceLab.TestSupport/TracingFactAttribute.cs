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
    public TracingFactAttribute(bool needsTraceCmd = false)
    {
        var reason = TestEnvironment.Reason(needsTraceCmd);
        if (reason is not null) Skip = reason;
    }
}

/// <summary>What the machine lacks for real-capture tests, or null.</summary>
public static class TestEnvironment
{
    private static readonly Lazy<string?> Tracing = new(Tracefs.UnavailableReason);

    public static string? Reason(bool needsTraceCmd)
    {
        if (!OperatingSystem.IsLinux()) return "real kernel captures need Linux (tracefs)";
        if (Tracing.Value is { } t) return $"kernel tracing unavailable: {t}";
        if (!OnPath("cmake")) return "cmake not installed (apt-get install -y cmake)";
        if (!OnPath("cc") && !OnPath("gcc")) return "no C compiler (apt-get install -y build-essential)";
        if (needsTraceCmd && !OnPath("trace-cmd")) return "trace-cmd not installed (apt-get install -y trace-cmd)";
        return null;
    }

    public static bool OnPath(string program) =>
        (System.Environment.GetEnvironmentVariable("PATH") ?? "").Split(':')
            .Any(dir => dir.Length > 0 && File.Exists(Path.Combine(dir, program)));
}
