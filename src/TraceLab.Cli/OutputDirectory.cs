namespace TraceLab.Cli;

/// <summary>
/// Where a run's files go. An existing non-empty directory is refused unless --force; every file is written to a
/// temporary name and renamed when complete, so a crash never leaves a half-written file under a final name.
/// </summary>
public sealed class OutputDirectory
{
    private readonly bool _force;

    private OutputDirectory(string path, bool force)
    {
        Path = path;
        _force = force;
    }

    public string Path { get; }

    public static OutputDirectory Prepare(string? requested, string defaultName, bool force)
    {
        var path = System.IO.Path.GetFullPath(requested ?? System.IO.Path.Combine("traces", defaultName));
        if (System.IO.File.Exists(path)) throw new UsageException($"output path {path} is a file, not a directory");
        if (Directory.Exists(path) && Directory.EnumerateFileSystemEntries(path).Any() && !force)
            throw new UsageException($"output directory {path} already exists and is not empty: choose another --out or add --force");
        try
        {
            Directory.CreateDirectory(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            throw new IOException($"cannot create output directory {path}: {ex.Message}", ex);
        }
        return new OutputDirectory(path, force);
    }

    public string File(string name) => System.IO.Path.Combine(Path, name);

    /// <summary>Writes via a temporary file, then renames; existing files are replaced only with --force.</summary>
    public string WriteText(string name, string content) => Commit(name, tmp => System.IO.File.WriteAllText(tmp, content));

    public string Commit(string name, Action<string> writeTemp)
    {
        var final = File(name);
        if (System.IO.File.Exists(final) && !_force)
            throw new UsageException($"{final} already exists: add --force to replace it");
        var tmp = File($".{name}.tmp");
        try
        {
            writeTemp(tmp);
            System.IO.File.Move(tmp, final, overwrite: true);
        }
        catch
        {
            TryDelete(tmp);
            throw;
        }
        return final;
    }

    public static void TryDelete(string path)
    {
        try { System.IO.File.Delete(path); }
        catch (IOException) { }
        catch (UnauthorizedAccessException) { }
    }
}
