using TraceLab.Workloads;

namespace TraceLab.TestSupport;

public static class RepoPaths
{
    public static string Root { get; } = RepositoryLayout.FindRoot();

    public static string SampleTraces => Path.Combine(Root, "sample-traces");

    /// <summary>A fresh directory under the system temp folder, removed by the caller.</summary>
    public static string NewTempDirectory(string prefix)
    {
        var dir = Path.Combine(Path.GetTempPath(), $"{prefix}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(dir);
        return dir;
    }
}

/// <summary>A fresh temporary directory, deleted with everything in it on Dispose.</summary>
public sealed class TempDirectory : IDisposable
{
    public TempDirectory(string prefix) => Path = RepoPaths.NewTempDirectory(prefix);

    public string Path { get; }

    public string File(string name) => System.IO.Path.Combine(Path, name);

    public void Dispose()
    {
        try { Directory.Delete(Path, recursive: true); }
        catch (IOException) { }
    }
}
