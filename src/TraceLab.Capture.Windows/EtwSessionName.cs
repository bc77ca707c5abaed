using System.Globalization;

namespace TraceLab.Capture.Windows;

/// <summary>
/// ETW sessions are machine-wide and outlive the process that started them, so the name carries the owner's pid:
/// a later run can tell a TraceLab session whose owner died (stale: stop it) from a live run's (leave it alone).
/// </summary>
public static class EtwSessionName
{
    public const string Prefix = "TraceLab-";

    public static string For(int ownerPid, string runId) => $"{Prefix}{ownerPid}-{runId}";

    /// <summary>The owner pid in a TraceLab session name, or null for names TraceLab did not make.</summary>
    public static int? OwnerOf(string sessionName)
    {
        if (!sessionName.StartsWith(Prefix, StringComparison.Ordinal)) return null;
        var rest = sessionName.AsSpan(Prefix.Length);
        var dash = rest.IndexOf('-');
        if (dash <= 0) return null;
        return int.TryParse(rest[..dash], NumberStyles.None, CultureInfo.InvariantCulture, out var pid) ? pid : null;
    }
}
