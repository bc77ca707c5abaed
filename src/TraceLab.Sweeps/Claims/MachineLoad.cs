using System.Globalization;

namespace TraceLab.Sweeps.Claims;

/// <summary>
/// Reads how busy the whole machine is (/proc/stat, /proc/loadavg), so a claims run can say how much of the CPUs
/// other processes took while its sweeps ran: on a shared machine that decides whether an SMP verdict counts.
/// </summary>
public static class MachineLoad
{
    /// <summary>Clock ticks per second of /proc/stat (USER_HZ: 100 on every Linux architecture .NET runs on).</summary>
    public const double TicksPerSecond = 100;

    /// <summary>Busy and total ticks over all CPUs (the "cpu" line), or null where /proc/stat is absent.</summary>
    public static (long Busy, long Total)? ReadCpuTicks(string path = "/proc/stat") =>
        ReadCpuLine(path) is { } line ? ParseCpuLine(line) : null;

    /// <summary>
    /// Steal ticks over all CPUs (the "cpu" line's eighth value: time the hypervisor took the vCPUs away), or null
    /// where /proc/stat or the value is absent.
    /// </summary>
    public static long? ReadStealTicks(string path = "/proc/stat") =>
        ReadCpuLine(path)?.Split(' ', StringSplitOptions.RemoveEmptyEntries) is { Length: > 8 } fields
        && long.TryParse(fields[8], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks)
            ? ticks
            : null;

    private static string? ReadCpuLine(string path)
    {
        try
        {
            if (!File.Exists(path)) return null;
            return File.ReadLines(path).FirstOrDefault(l => l.StartsWith("cpu ", StringComparison.Ordinal));
        }
        catch (IOException) { return null; }
        catch (UnauthorizedAccessException) { return null; }
    }

    /// <summary>"cpu user nice system idle iowait irq softirq steal ...": idle and iowait are not busy.</summary>
    public static (long Busy, long Total)? ParseCpuLine(string line)
    {
        var fields = line.Split(' ', StringSplitOptions.RemoveEmptyEntries).Skip(1).ToList();
        if (fields.Count < 4) return null;
        var values = new List<long>();
        // Guest time is already counted in user time: only the first 8 fields add up to the total.
        foreach (var f in fields.Take(8))
        {
            if (!long.TryParse(f, NumberStyles.None, CultureInfo.InvariantCulture, out var v)) return null;
            values.Add(v);
        }
        var total = values.Sum();
        var idle = values[3] + (values.Count > 4 ? values[4] : 0);
        return (total - idle, total);
    }

    /// <summary>The 1-minute load average, or null where /proc/loadavg is absent.</summary>
    public static double? ReadLoadAverage(string path = "/proc/loadavg")
    {
        try
        {
            if (!File.Exists(path)) return null;
            var first = File.ReadAllText(path).Split(' ', StringSplitOptions.RemoveEmptyEntries).FirstOrDefault();
            return double.TryParse(first, NumberStyles.Float, CultureInfo.InvariantCulture, out var v) ? v : null;
        }
        catch (IOException) { return null; }
        catch (UnauthorizedAccessException) { return null; }
    }

    /// <summary>
    /// Share of the machine's CPU capacity used by others during a window: busy ticks minus the workload's own
    /// CPU time (its runs' user + system), over all ticks. 0 when our runs account for all the busy time.
    /// </summary>
    public static double ForeignShare(long busyTicks, long totalTicks, long ownCpuNs)
    {
        if (totalTicks <= 0) return 0;
        var own = ownCpuNs / 1e9 * TicksPerSecond;
        return Math.Clamp((busyTicks - own) / totalTicks, 0, 1);
    }
}
