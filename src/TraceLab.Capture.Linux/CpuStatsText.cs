using System.Globalization;

namespace TraceLab.Capture.Linux;

/// <summary>Reads the counters of a per_cpu/cpuN/stats file ("overrun: 12" lines).</summary>
public static class CpuStatsText
{
    public static long Value(string stats, string key)
    {
        foreach (var line in stats.Split('\n'))
        {
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0 || line[..colon].Trim() != key) continue;
            return long.TryParse(line[(colon + 1)..].Trim(), NumberStyles.Integer, CultureInfo.InvariantCulture, out var v) ? v : 0;
        }
        return 0;
    }

    /// <summary>Events the ring buffer overwrote or could not store.</summary>
    public static long LostEvents(string stats) =>
        Value(stats, "overrun") + Value(stats, "commit overrun") + Value(stats, "dropped events");
}
