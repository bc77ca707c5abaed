namespace TraceLab.TestSupport;

/// <summary>
/// A tmpfs mounted on a fresh temporary directory (tests only): a disk that is full after a few megabytes, or a
/// read-only one. Unmounted and removed on Dispose.
/// </summary>
public sealed class TmpfsMount : IDisposable
{
    public TmpfsMount(string options)
    {
        Path = RepoPaths.NewTempDirectory("tracelab-tmpfs");
        var (code, _, err) = ProcessOutput.Run("mount", "-t", "tmpfs", "-o", options, "tmpfs", Path);
        if (code != 0)
        {
            Directory.Delete(Path);
            throw new InvalidOperationException($"mount -t tmpfs -o {options} failed: {err.Trim()}");
        }
    }

    public string Path { get; }

    public void Dispose()
    {
        // A lazy unmount still detaches the mount if a process we failed to stop holds a file open in it.
        if (ProcessOutput.Run("umount", Path).ExitCode != 0) ProcessOutput.Run("umount", "-l", Path);
        try { Directory.Delete(Path); }
        catch (IOException) { }
    }

    /// <summary>Null when a tmpfs can be mounted here; otherwise why not, for tests that must skip.</summary>
    public static string? UnavailableReason()
    {
        if (!OperatingSystem.IsLinux()) return "tmpfs mounts need Linux";
        if (Environment.UserName != "root") return "mounting a tmpfs needs root";
        if (!TestEnvironment.OnPath("mount") || !TestEnvironment.OnPath("umount"))
            return "mount/umount not installed (apt-get install -y mount)";
        try
        {
            using (new TmpfsMount("size=64k")) { }
            return null;
        }
        catch (InvalidOperationException ex)
        {
            return ex.Message;
        }
    }
}

/// <summary>A test that mounts tmpfs file systems (a small or read-only disk); skipped, with the reason, where it
/// cannot (not Linux, not root, no mount).</summary>
public sealed class TmpfsFactAttribute : Xunit.FactAttribute
{
    public TmpfsFactAttribute()
    {
        if (TestEnvironment.Tmpfs.Value is { } reason) Skip = reason;
    }
}
