using Xunit;

namespace TraceLab.TestSupport;

/// <summary>
/// A test that records a real perf.data with `perf record -a` (and runs `perf sched` on it). Skipped, with the
/// reason, where perf is missing or cannot record sched tracepoints system-wide here.
/// </summary>
public sealed class PerfFactAttribute : FactAttribute
{
    public PerfFactAttribute(bool needsWorkloads = true)
    {
        var reason = PerfEnvironment.Reason.Value;
        if (reason is null && needsWorkloads) reason = TestEnvironment.NativeToolsReason(windows: false);
        if (reason is not null) Skip = reason;
    }
}

/// <summary>Whether `perf record -e sched:sched_switch -a` works here (tried once per test run).</summary>
public static class PerfEnvironment
{
    public static readonly Lazy<string?> Reason = new(Probe);

    private static string? Probe()
    {
        if (!OperatingSystem.IsLinux()) return "perf record needs Linux";
        if (!TestEnvironment.OnPath("perf")) return "perf not installed (apt-get install -y linux-perf)";
        var dir = RepoPaths.NewTempDirectory("tracelab-perf-probe");
        try
        {
            var file = Path.Combine(dir, "probe.perf.data");
            var (code, _, err) =
                ProcessOutput.Run("perf", "record", "-q", "-o", file, "-e", "sched:sched_switch", "-a", "--", "true");
            if (code != 0 || !File.Exists(file))
                return $"perf record -e sched:sched_switch -a failed here (exit {code}): {FirstLine(err)}";
            (code, _, err) = ProcessOutput.Run("perf", "sched", "-i", file, "timehist", "-s");
            return code != 0 ? $"perf sched timehist failed here (exit {code}): {FirstLine(err)}" : null;
        }
        finally
        {
            try { Directory.Delete(dir, recursive: true); }
            catch (IOException) { }
        }
    }

    private static string FirstLine(string text) =>
        text.Split('\n', StringSplitOptions.RemoveEmptyEntries).FirstOrDefault()?.Trim() ?? "";
}
