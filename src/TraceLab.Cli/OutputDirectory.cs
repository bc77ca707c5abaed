namespace TraceLab.Cli;

/// <summary>
/// Where a run's files go. An existing non-empty directory is refused unless --force; every file is written to a
/// temporary name, synced, and renamed when complete, so a crash or a full disk never leaves a half-written file
/// under a final name.
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
            throw new UsageException(
                $"output directory {path} already exists and is not empty: choose another --out or add --force");
        try
        {
            Directory.CreateDirectory(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            throw new IOException($"cannot create output directory {path}: {ex.Message}", ex);
        }
        // An existing read-only or foreign directory would otherwise fail only after the build and the tracefs
        // instance, leaving both behind for nothing.
        try
        {
            using var probe = new FileStream(System.IO.Path.Combine(path, $".tracelab-probe-{Environment.ProcessId}"),
                FileMode.Create, FileAccess.Write, FileShare.None, 1, FileOptions.DeleteOnClose);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            throw new IOException($"output directory {path} is not writable: {ex.Message}", ex);
        }
        return new OutputDirectory(path, force);
    }

    public string File(string name) => System.IO.Path.Combine(Path, name);

    /// <summary>Writes via a temporary file, then renames; existing files are replaced only with --force.</summary>
    public string WriteText(string name, string content) => Commit(name, tmp => WriteSynced(tmp, content));

    /// <summary>As <see cref="WriteText"/>, with the content written to the stream as it is produced.</summary>
    public string WriteStream(string name, Action<Stream> write) => Commit(name, tmp => WriteSynced(tmp, write));

    private static void WriteSynced(string path, string content) => WriteSynced(path, fs =>
    {
        // Encoded in chunks, not into one array as large as the text (report.html of a whole system: 100+ MB).
        using var writer = new StreamWriter(fs, Utf8NoBom, 1 << 16, leaveOpen: true);
        writer.Write(content);
    });

    private static void WriteSynced(string path, Action<Stream> write)
    {
        using var fs = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 1 << 16);
        write(fs);
        // Some file systems report a full disk only when the data reaches it: find out before the rename.
        fs.Flush(flushToDisk: true);
    }

    private static readonly System.Text.UTF8Encoding Utf8NoBom = new(encoderShouldEmitUTF8Identifier: false);

    public string Commit(string name, Action<string> writeTemp) => Write(name, writeTemp).Commit();

    /// <summary>
    /// Writes <paramref name="name"/> under its temporary name and leaves the rename to the caller
    /// (<see cref="PendingFile.Commit"/>): files written side by side are renamed only once all are complete.
    /// </summary>
    public PendingFile Write(string name, Action<string> writeTemp)
    {
        var final = File(name);
        if (System.IO.File.Exists(final) && !_force)
            throw new UsageException($"{final} already exists: add --force to replace it");
        var tmp = File($".{name}.tmp");
        try
        {
            writeTemp(tmp);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            TryDelete(tmp);
            throw new IOException($"writing {final} failed: {ex.Message}", ex);
        }
        catch
        {
            TryDelete(tmp);
            throw;
        }
        return new PendingFile(tmp, final);
    }

    /// <summary>As <see cref="WriteStream"/>, renamed only by <see cref="PendingFile.Commit"/>.</summary>
    public PendingFile WritePendingStream(string name, Action<Stream> write) =>
        Write(name, tmp => WriteSynced(tmp, write));

    /// <summary>As <see cref="WriteText"/>, renamed only by <see cref="PendingFile.Commit"/>.</summary>
    public PendingFile WritePendingText(string name, string content) => Write(name, tmp => WriteSynced(tmp, content));

    public static void TryDelete(string path)
    {
        try { System.IO.File.Delete(path); }
        catch (IOException) { }
        catch (UnauthorizedAccessException) { }
    }
}

/// <summary>A file written completely under its temporary name, waiting to be renamed to its final one.</summary>
public sealed class PendingFile
{
    private readonly string _temporary;

    internal PendingFile(string temporary, string final)
    {
        _temporary = temporary;
        Final = final;
    }

    /// <summary>The file's final path.</summary>
    public string Final { get; }

    /// <summary>Renames the file to its final name (replacing the one there).</summary>
    public string Commit()
    {
        try
        {
            System.IO.File.Move(_temporary, Final, overwrite: true);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            Discard();
            throw new IOException($"writing {Final} failed: {ex.Message}", ex);
        }
        return Final;
    }

    /// <summary>Deletes the temporary file (the final one, if any, stays as it was).</summary>
    public void Discard() => OutputDirectory.TryDelete(_temporary);
}
