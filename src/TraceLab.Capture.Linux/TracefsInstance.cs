using System.Globalization;

namespace TraceLab.Capture.Linux;

/// <summary>
/// A private tracefs instance (instances/NAME): its own ring buffers and event switches, so TraceLab never touches
/// the global buffer or another tool's instance. The name carries the owner pid, so a later run can tell whether the
/// owner is gone and the instance is stale.
/// </summary>
public sealed class TracefsInstance : IDisposable
{
    public const string NamePrefix = "tracelab-";

    private bool _removed;

    private TracefsInstance(string tracefsRoot, string name)
    {
        TracefsRoot = tracefsRoot;
        Name = name;
        Path = System.IO.Path.Combine(tracefsRoot, "instances", name);
    }

    public string TracefsRoot { get; }
    public string Name { get; }
    public string Path { get; }
    public string TraceMarkerPath => System.IO.Path.Combine(Path, "trace_marker");

    public static string NameFor(int ownerPid, string runId) => $"{NamePrefix}{ownerPid}-{runId}";

    /// <summary>The owner pid encoded in a TraceLab instance name, or null for names TraceLab did not make.</summary>
    public static int? OwnerOf(string instanceName)
    {
        if (!instanceName.StartsWith(NamePrefix, StringComparison.Ordinal)) return null;
        var rest = instanceName.AsSpan(NamePrefix.Length);
        var dash = rest.IndexOf('-');
        if (dash <= 0) return null;
        return int.TryParse(rest[..dash], NumberStyles.None, CultureInfo.InvariantCulture, out var pid) ? pid : null;
    }

    public static TracefsInstance Create(string tracefsRoot, string name)
    {
        var inst = new TracefsInstance(tracefsRoot, name);
        if (Directory.Exists(inst.Path))
            throw new TracingUnavailableException($"tracefs instance '{name}' already exists; refusing to reuse it");
        try
        {
            Directory.CreateDirectory(inst.Path);
        }
        catch (Exception ex) when (ex is UnauthorizedAccessException or IOException)
        {
            throw new TracingUnavailableException(
                $"cannot create tracefs instance {inst.Path} ({ex.Message}): run as root");
        }
        return inst;
    }

    /// <summary>
    /// Removes TraceLab instances whose owner process no longer exists. Instances without a TraceLab name, or whose
    /// owner is alive, are never touched.
    /// </summary>
    public static StaleInstances RemoveStale(string tracefsRoot)
    {
        var removed = new List<string>();
        var kept = new List<string>();
        var dir = System.IO.Path.Combine(tracefsRoot, "instances");
        if (!Directory.Exists(dir)) return new StaleInstances(removed, kept);
        foreach (var path in Directory.GetDirectories(dir))
        {
            var name = System.IO.Path.GetFileName(path);
            var owner = OwnerOf(name);
            if (owner is null || Libc.ProcessExists(owner.Value)) continue;
            var stale = new TracefsInstance(tracefsRoot, name);
            // No reader of ours can hold a stale instance open, so busy means busy: do not wait long.
            stale.Remove(attempts: 5);
            if (!Directory.Exists(path))
            {
                removed.Add(name);
                continue;
            }
            // Typically the workload of the run that died: it outlives TraceLab and keeps trace_marker open.
            var holders = ProcessesWithFilesUnder(path);
            kept.Add(holders.Count > 0
                ? $"stale tracefs instance {name} (left by a TraceLab run that died) is still open in "
                    + $"{string.Join(", ", holders)}: stop it and the next run removes the instance"
                : $"stale tracefs instance {name} (left by a TraceLab run that died) could not be removed: it is busy");
        }
        return new StaleInstances(removed, kept);
    }

    /// <summary>
    /// "pid N (comm)" for every process with a file descriptor open under <paramref name="directory"/>.
    /// </summary>
    private static List<string> ProcessesWithFilesUnder(string directory)
    {
        var prefix = directory.TrimEnd('/') + "/";
        var found = new List<string>();
        foreach (var proc in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(System.IO.Path.GetFileName(proc), NumberStyles.None, CultureInfo.InvariantCulture,
                out var pid)) continue;
            try
            {
                var open = Directory.EnumerateFileSystemEntries(System.IO.Path.Combine(proc, "fd"))
                    .Any(fd => new FileInfo(fd).LinkTarget?.StartsWith(prefix, StringComparison.Ordinal) == true);
                if (!open) continue;
                var comm = File.ReadAllText(System.IO.Path.Combine(proc, "comm")).Trim();
                found.Add($"pid {pid} ({comm})");
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // The process exited while we looked, or its fds are not ours to read.
            }
        }
        return found;
    }

    public int CpuCount => Directory.GetDirectories(System.IO.Path.Combine(Path, "per_cpu"), "cpu*").Length;

    public void Write(string relative, string value) =>
        File.WriteAllText(System.IO.Path.Combine(Path, relative), value);

    public string Read(string relative) => File.ReadAllText(System.IO.Path.Combine(Path, relative));

    public bool HasEvent(string systemSlashName) =>
        File.Exists(System.IO.Path.Combine(Path, "events", systemSlashName, "enable"));

    public void EnableEvent(string systemSlashName) => Write($"events/{systemSlashName}/enable", "1");

    public string EventFormat(string systemSlashName) => Read($"events/{systemSlashName}/format");

    public void SetTracing(bool on) => Write("tracing_on", on ? "1" : "0");

    public string PerCpuPipe(int cpu) => System.IO.Path.Combine(Path, "per_cpu", $"cpu{cpu}", "trace_pipe_raw");

    public string CpuStats(int cpu) => Read($"per_cpu/cpu{cpu}/stats");

    /// <summary>Stops tracing, switches every event off and removes the instance directory.</summary>
    public void Remove() => Remove(attempts: 50);

    private void Remove(int attempts)
    {
        if (_removed) return;
        try { SetTracing(false); } catch (IOException) { } catch (UnauthorizedAccessException) { }
        try { Write("events/enable", "0"); } catch (IOException) { } catch (UnauthorizedAccessException) { }
        // rmdir fails with EBUSY while a reader still holds a per-CPU pipe open; the caller closes them first.
        for (var attempt = 0; attempt < attempts && Directory.Exists(Path); attempt++)
        {
            try { Directory.Delete(Path); }
            catch (IOException) { Thread.Sleep(20); }
            catch (UnauthorizedAccessException) { break; }
        }
        _removed = !Directory.Exists(Path);
    }

    public void Dispose() => Remove();
}

/// <summary>
/// What <see cref="TracefsInstance.RemoveStale"/> did: names removed, and one line per stale instance it had to keep.
/// </summary>
public sealed record StaleInstances(IReadOnlyList<string> Removed, IReadOnlyList<string> Kept);
