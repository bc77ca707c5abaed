using TraceLab.Capture.Linux;

namespace TraceLab.Tests.Capture;

/// <summary>
/// Issue "Reliability": tracefs absent, and tracefs that cannot be mounted. The first points the locate logic at a
/// root that does not exist; the second runs the real `tracelab trace` in a user + mount namespace where
/// /sys/kernel is an empty tmpfs and mounting tracefs is refused by the kernel (it is not mountable in a user
/// namespace).
/// </summary>
public sealed class TracefsUnavailableTests
{
    [RootOnLinuxFact]
    public void An_absent_tracefs_root_says_how_to_mount_it()
    {
        var missing = Path.Combine(Path.GetTempPath(), "no-tracefs-" + Guid.NewGuid().ToString("N"));
        var ex = Assert.Throws<TracingUnavailableException>(() => Tracefs.Locate(mountIfNeeded: true, [missing]));
        Assert.Equal(
            $"tracefs is not mounted: run 'mount -t tracefs nodev {missing}' (kernel needs CONFIG_FTRACE)", ex.Message);
        Assert.False(Directory.Exists(missing));
    }

    [RootOnLinuxFact]
    public void Without_mounting_an_empty_root_is_not_mounted()
    {
        using var empty = new TempDirectory("tracelab-empty-root");
        var ex = Assert.Throws<TracingUnavailableException>(() => Tracefs.Locate(mountIfNeeded: false, [empty.Path]));
        Assert.StartsWith("tracefs is not mounted: run 'mount -t tracefs nodev ", ex.Message);
        Assert.Empty(Directory.GetFileSystemEntries(empty.Path));
    }

    [UserNamespaceFact]
    public void Trace_where_tracefs_cannot_be_mounted_fails_in_one_line_and_creates_nothing()
    {
        var tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");
        var outDir = Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid());
        var (code, _, err) = ProcessOutput.Run("unshare", "-Urm", "sh", "-c",
            "mount -t tmpfs none /sys/kernel && mkdir /sys/kernel/tracing && exec \"$0\" \"$@\"",
            "dotnet", tool, "trace", "timemutex", "mutex", "--out", outDir);
        Assert.Equal(1, code);
        var line = Assert.Single(err.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.StartsWith("tracelab: tracefs is not mounted and mounting it failed (", line);
        Assert.EndsWith("): run 'mount -t tracefs nodev /sys/kernel/tracing'", line);
        Assert.False(Directory.Exists(outDir));
    }
}

/// <summary>Linux and root (the locate logic checks root before it looks at mounting); reason computed.</summary>
public sealed class RootOnLinuxFactAttribute : FactAttribute
{
    public RootOnLinuxFactAttribute() => Skip = TestEnvironment.RootOnLinuxReason();
}

/// <summary>Needs unshare and unprivileged user + mount namespaces (tried once); reason computed.</summary>
public sealed class UserNamespaceFactAttribute : FactAttribute
{
    private static readonly Lazy<string?> Reason = new(() =>
    {
        if (!OperatingSystem.IsLinux()) return "Linux only (namespaces)";
        if (!TestEnvironment.OnPath("unshare")) return "unshare not installed (util-linux)";
        try
        {
            var (code, _, err) = ProcessOutput.Run("unshare", "-Urm", "sh", "-c", "mount -t tmpfs none /sys/kernel");
            return code == 0 ? null : $"user/mount namespaces unavailable here: {err.Trim()}";
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            return $"cannot run unshare: {ex.Message}";
        }
    });

    public UserNamespaceFactAttribute()
    {
        if (Reason.Value is { } reason) Skip = reason;
    }
}
