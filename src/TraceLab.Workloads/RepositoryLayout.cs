namespace TraceLab.Workloads;

/// <summary>Finds the TraceLab source tree (for native-workloads/) from wherever the CLI runs.</summary>
public static class RepositoryLayout
{
    /// <summary>
    /// TRACELAB_ROOT, else the first ancestor of the current directory or of the app holding
    /// native-workloads/CMakeLists.txt.
    /// </summary>
    public static string FindRoot()
    {
        var env = Environment.GetEnvironmentVariable("TRACELAB_ROOT");
        if (!string.IsNullOrEmpty(env) && IsRoot(env)) return Path.GetFullPath(env);
        foreach (var start in new[] { Directory.GetCurrentDirectory(), AppContext.BaseDirectory })
        {
            for (var dir = new DirectoryInfo(start); dir is not null; dir = dir.Parent)
                if (IsRoot(dir.FullName)) return dir.FullName;
        }
        throw new WorkloadException("cannot find the TraceLab source tree (native-workloads/CMakeLists.txt): run from "
            + "the repository or set TRACELAB_ROOT");
    }

    private static bool IsRoot(string dir) => File.Exists(Path.Combine(dir, "native-workloads", "CMakeLists.txt"));
}
