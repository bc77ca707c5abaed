namespace TraceLab.Workloads;

/// <summary>
/// Builds native-workloads/ with CMake on first use and whenever a source changed (CMake's own dependency tracking
/// decides what to rebuild), into the git-ignored native-workloads/build/&lt;platform&gt;/. Concurrent TraceLab runs
/// serialize on a lock file so they never build into the same tree at once.
/// </summary>
public sealed class NativeWorkloadBuilder(string repositoryRoot)
{
    private readonly string _root = repositoryRoot;

    public string SourceDirectory => Path.Combine(_root, "native-workloads");
    public string BuildDirectory =>
        Path.Combine(SourceDirectory, "build", OperatingSystem.IsWindows() ? "windows" : "linux");

    /// <summary>Returns the path of the workload executable, building first if needed.</summary>
    public string EnsureBuilt(string workload)
    {
        Directory.CreateDirectory(BuildDirectory);
        using (AcquireLock())
        {
            if (!File.Exists(Path.Combine(BuildDirectory, "CMakeCache.txt")))
                Check(ProcessRunner.Run("cmake",
                    ["-S", SourceDirectory, "-B", BuildDirectory, "-DCMAKE_BUILD_TYPE=Release"], _root), "configure");
            Check(ProcessRunner.Run("cmake", ["--build", BuildDirectory, "--target", workload, "--parallel"], _root),
                "build");
        }
        var exe = Path.Combine(BuildDirectory, "bin", OperatingSystem.IsWindows() ? workload + ".exe" : workload);
        if (!File.Exists(exe)) throw new WorkloadException($"the build did not produce {exe}");
        return exe;
    }

    private static void Check((int ExitCode, string Output) result, string step)
    {
        if (result.ExitCode == 0) return;
        var lines = result.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        var firstError = lines.FirstOrDefault(l => l.Contains("error", StringComparison.OrdinalIgnoreCase))
            ?? lines.LastOrDefault() ?? "";
        throw new WorkloadException($"native workload {step} failed: {firstError.Trim()}");
    }

    private FileStream AcquireLock()
    {
        var path = Path.Combine(BuildDirectory, ".tracelab-build.lock");
        for (var attempt = 0; ; attempt++)
        {
            try
            {
                return new FileStream(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
            }
            catch (IOException) when (attempt < 600)
            {
                Thread.Sleep(100);
            }
        }
    }
}
