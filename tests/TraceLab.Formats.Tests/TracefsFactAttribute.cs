using Xunit;

namespace TraceLab.Formats.Tests;

/// <summary>
/// A fact that runs only where tracefs is usable and trace-cmd is installed; elsewhere it reports itself skipped with
/// the reason, decided at discovery time (xunit 2 has no runtime Assert.Skip).
/// </summary>
public sealed class TracefsFactAttribute : FactAttribute
{
    public const string Root = "/sys/kernel/tracing";

    public TracefsFactAttribute()
    {
        var reason = WhyUnavailable();
        if (reason is not null) Skip = reason;
    }

    private static string? WhyUnavailable()
    {
        if (!OperatingSystem.IsLinux()) return "tracefs needs Linux";
        if (Environment.UserName != "root") return "tracefs instances need root";
        if (!File.Exists(Path.Combine(Root, "events", "header_page")))
            return $"tracefs is not mounted at {Root} (mount -t tracefs nodev {Root})";
        if (!Directory.Exists(Path.Combine(Root, "instances"))) return "tracefs has no instances directory";
        var path = Environment.GetEnvironmentVariable("PATH") ?? "";
        if (!path.Split(':').Any(d => File.Exists(Path.Combine(d, "trace-cmd")))) return "trace-cmd is not installed";
        return null;
    }
}
