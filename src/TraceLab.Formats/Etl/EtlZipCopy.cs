using System.IO.Compression;
using TraceLab.Core;

namespace TraceLab.Formats.Etl;

/// <summary>The archive's .etl copied to a file of its own in a new temporary folder; disposing deletes both.</summary>
internal sealed class EtlZipCopy : IDisposable
{
    private readonly string _dir;

    private EtlZipCopy(string dir, string file, string entryName)
    {
        _dir = dir;
        File = file;
        EntryName = entryName;
    }

    public string File { get; }

    /// <summary>The .etl's name inside the archive.</summary>
    public string EntryName { get; }

    /// <exception cref="TraceFormatException">Not a readable zip, no single .etl in it, or the copy failed.</exception>
    public static EtlZipCopy Extract(string path)
    {
        try
        {
            using var archive = ZipFile.OpenRead(path);
            var etls = archive.Entries.Where(e => e.FullName.EndsWith(".etl", StringComparison.OrdinalIgnoreCase))
                .ToList();
            if (etls.Count != 1)
            {
                throw new TraceFormatException(path, 0,
                    $"a zip archive holding one .etl file, found {etls.Count} among {archive.Entries.Count} entries");
            }

            return CopyOut(path, etls[0]);
        }
        catch (InvalidDataException e)
        {
            // The archive's directories are read lazily: damage may show first when its entries are listed.
            throw new TraceFormatException(path, 0, $"a readable zip archive ({e.Message})");
        }
    }

    private static EtlZipCopy CopyOut(string path, ZipArchiveEntry entry)
    {
        // The process id in the name says whose copy it is (and lets a test tell its own from another run's).
        var dir = Directory.CreateTempSubdirectory($"tracelab-etlzip-{Environment.ProcessId}-").FullName;
        var copy = new EtlZipCopy(dir, Path.Combine(dir, "trace.etl"), entry.FullName);
        try
        {
            using var source = entry.Open();
            using var target = new FileStream(copy.File, FileMode.CreateNew, FileAccess.Write, FileShare.None,
                bufferSize: 1 << 16);
            CopyAtMost(source, target, entry.Length, path, entry.FullName);
            return copy;
        }
        catch (Exception e) when (e is InvalidDataException or IOException)
        {
            copy.Dispose();
            throw new TraceFormatException(path, 0, $"a readable zip entry {entry.FullName} ({e.Message})");
        }
        catch
        {
            copy.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Copies at most the entry's stated size: an entry that inflates to more (a zip bomb, or damage) is refused
    /// rather than allowed to fill the disk.
    /// </summary>
    private static void CopyAtMost(Stream source, Stream target, long stated, string path, string name)
    {
        var buffer = new byte[1 << 16];
        long copied = 0;
        int n;
        while ((n = source.Read(buffer)) > 0)
        {
            copied += n;
            if (copied > stated)
            {
                throw new TraceFormatException(path, 0,
                    $"the zip entry {name} to inflate to its stated {stated} bytes, it inflates to more");
            }

            target.Write(buffer, 0, n);
        }

        if (copied != stated)
            throw new TraceFormatException(path, 0, $"the zip entry {name} to hold {stated} bytes, found {copied}");
    }

    /// <summary>Deletes the copy now if the OS allows it while the reader has it open (Linux does); else
    /// <see cref="Dispose"/> does.</summary>
    public void DeleteEarly() => TryDelete();

    public void Dispose() => TryDelete();

    private void TryDelete()
    {
        try
        {
            if (Directory.Exists(_dir)) Directory.Delete(_dir, recursive: true);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Windows keeps an open file (Dispose tries again); past that the folder stays in the temporary directory.
        }
    }
}
