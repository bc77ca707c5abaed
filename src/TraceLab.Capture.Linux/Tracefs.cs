namespace TraceLab.Capture.Linux;

/// <summary>Finds (and when root, mounts) tracefs, and says in one line what is missing when it cannot.</summary>
public static class Tracefs
{
    private static readonly string[] Candidates = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

    /// <summary>
    /// Returns the tracefs root, mounting it at /sys/kernel/tracing when it is empty and we are root.
    /// </summary>
    public static string Locate(bool mountIfNeeded = true) => Locate(mountIfNeeded, Candidates);

    /// <summary>
    /// As <see cref="Locate(bool)"/> over other candidate roots (the first is the mount point); tests point it at paths
    /// that are not tracefs.
    /// </summary>
    internal static string Locate(bool mountIfNeeded, IReadOnlyList<string> candidates)
    {
        if (!OperatingSystem.IsLinux())
            throw new TracingUnavailableException(
                "the tracefs backend runs on Linux only (use the ETW backend on Windows)");
        foreach (var c in candidates)
            if (File.Exists(Path.Combine(c, "trace_marker")) || Directory.Exists(Path.Combine(c, "instances")))
                return c;

        var root = Libc.GetEuid() == 0;
        if (!root)
            throw new TracingUnavailableException(
                "kernel tracing needs root (or CAP_SYS_ADMIN with tracefs access): run as root, e.g. sudo dotnet run "
                    + "-- ...");
        var target = candidates[0];
        if (!mountIfNeeded || !Directory.Exists(target))
            throw new TracingUnavailableException(
                $"tracefs is not mounted: run 'mount -t tracefs nodev {target}' (kernel needs CONFIG_FTRACE)");
        if (Libc.Mount("nodev", target, "tracefs", 0, 0) != 0)
        {
            var errno = System.Runtime.InteropServices.Marshal.GetLastPInvokeError();
            throw new TracingUnavailableException(
                $"tracefs is not mounted and mounting it failed ({Libc.ErrorText(errno)}): run 'mount -t tracefs nodev "
                    + $"{target}'");
        }
        if (!Directory.Exists(Path.Combine(target, "instances")))
            throw new TracingUnavailableException(
                "tracefs mounted but has no instances/ directory: this kernel's ftrace is too old or disabled");
        return target;
    }

    /// <summary>Null when tracing can be used; otherwise the reason, for tests that must skip.</summary>
    public static string? UnavailableReason()
    {
        try
        {
            var root = Locate();
            if (Libc.GetEuid() != 0) return "kernel tracing needs root";
            if (!Directory.Exists(Path.Combine(root, "events", "sched", "sched_switch")))
                return "this kernel has no sched:sched_switch tracepoint";
            return null;
        }
        catch (TracingUnavailableException ex)
        {
            return ex.Message;
        }
    }
}
