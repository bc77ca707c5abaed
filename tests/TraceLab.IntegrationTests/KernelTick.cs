using System.Globalization;
using System.IO.Compression;

namespace TraceLab.IntegrationTests;

/// <summary>
/// The length of this kernel's scheduler tick (1 / CONFIG_HZ), the unit in which getrusage samples the split of CPU
/// time between user and system mode (tick-based CPU accounting). Read from the kernel's configuration
/// (/proc/config.gz or /boot/config-RELEASE); where neither is readable, 10 ms (CONFIG_HZ = 100, the longest tick a
/// kernel is built with): the fewest samples, so the widest sampling error, never a narrower one than the truth.
/// </summary>
public static class KernelTick
{
    private const long LongestTickNs = 10_000_000;

    /// <summary>The tick in nanoseconds.</summary>
    public static long Nanoseconds { get; } = Read();

    private static long Read()
    {
        foreach (var text in ConfigTexts())
        {
            foreach (var line in text.Split('\n'))
            {
                if (!line.StartsWith("CONFIG_HZ=", StringComparison.Ordinal)) continue;
                var value = line["CONFIG_HZ=".Length..];
                if (long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out var hz) && hz > 0)
                    return 1_000_000_000 / hz;
            }
        }
        return LongestTickNs;
    }

    private static IEnumerable<string> ConfigTexts()
    {
        string? text = null;
        try
        {
            using var gz = new GZipStream(File.OpenRead("/proc/config.gz"), CompressionMode.Decompress);
            using var reader = new StreamReader(gz);
            text = reader.ReadToEnd();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidDataException)
        {
        }
        if (text is not null) yield return text;
        string? boot = null;
        try
        {
            boot = File.ReadAllText($"/boot/config-{File.ReadAllText("/proc/sys/kernel/osrelease").Trim()}");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
        }
        if (boot is not null) yield return boot;
    }
}
