namespace TraceLab.IntegrationTests;

/// <summary>
/// The time the hypervisor took this machine's vCPUs away (steal): inside the intervals a trace measures, never
/// charged to a task, so it is what a traced run time may exceed getrusage by (docs/testing.md#rusage-steal-allowance).
/// </summary>
internal static class HostSteal
{
    /// <summary>
    /// All CPUs' steal time so far (/proc/stat's "cpu" line, its eighth value, in USER_HZ = 100 ticks a second); 0
    /// where the file or the value is absent.
    /// </summary>
    public static long TotalNs()
    {
        var line = File.Exists("/proc/stat")
            ? File.ReadLines("/proc/stat").FirstOrDefault(l => l.StartsWith("cpu ", StringComparison.Ordinal))
            : null;
        var fields = line?.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return fields is { Length: > 8 } && long.TryParse(fields[8], out var ticks) ? ticks * 10_000_000L : 0;
    }
}
