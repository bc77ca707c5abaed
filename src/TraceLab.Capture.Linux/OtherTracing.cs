using System.Globalization;

namespace TraceLab.Capture.Linux;

/// <summary>
/// Tracing on this machine besides TraceLab's own capture (docs/metrics.md#other-tracing). Every enabled event runs
/// its probe, and a stack-recording trigger its unwinder, on whichever thread hits it: a second tracer at the
/// scheduler's tracepoints makes the traced threads' switches slower and their run times differ from what the
/// kernel charges them (getrusage).
/// </summary>
public static class OtherTracing
{
    /// <summary>Events beyond this many are summarised as a count.</summary>
    private const int EventsNamed = 4;

    /// <summary>
    /// One line per other tracer: each tracefs instance (other than <paramref name="ownInstance"/>) with events
    /// enabled or a tracer set, the top-level buffer's enabled events and tracer, and every process holding perf
    /// events open. Empty when there is none, or when tracefs and /proc cannot be read.
    /// </summary>
    public static IReadOnlyList<string> Find(string tracefsRoot, string? ownInstance = null)
    {
        var found = new List<string>();
        if (Describe(tracefsRoot) is { } top) found.Add($"the top-level tracefs buffer {top}");
        var instances = Path.Combine(tracefsRoot, "instances");
        if (Directory.Exists(instances))
        {
            foreach (var dir in Directory.GetDirectories(instances).Order(StringComparer.Ordinal))
            {
                var name = Path.GetFileName(dir);
                if (name == ownInstance) continue;
                if (Describe(dir) is { } what) found.Add($"tracefs instance {name} {what}");
            }
        }
        found.AddRange(PerfEventHolders().Select(p => $"{p} has perf events open"));
        return found;
    }

    /// <summary>The notice a capture prints at its start; null when nothing else traces.</summary>
    public static string? Notice(IReadOnlyList<string> others) => others.Count == 0
        ? null
        : $"other tracing is active on this machine and changes the timings traced here (each event's probe runs on " +
          $"the traced threads): {string.Join("; ", others)} (docs/metrics.md#other-tracing)";

    /// <summary>"has N events enabled (a, b, …)[, tracer T][, tracing_on 0]" for a buffer that traces; otherwise
    /// null.</summary>
    private static string? Describe(string buffer)
    {
        var events = ReadLines(Path.Combine(buffer, "set_event")).Order(StringComparer.Ordinal).ToList();
        var tracer = ReadLines(Path.Combine(buffer, "current_tracer")).FirstOrDefault() ?? "nop";
        if (events.Count == 0 && tracer == "nop") return null;
        var parts = new List<string>();
        if (events.Count > 0)
        {
            var named = string.Join(", ", events.Take(EventsNamed));
            parts.Add(events.Count > EventsNamed
                ? $"has {events.Count} events enabled ({named}, …)"
                : $"has {events.Count} event{(events.Count == 1 ? "" : "s")} enabled ({named})");
        }
        if (tracer != "nop") parts.Add($"tracer {tracer}");
        var on = ReadLines(Path.Combine(buffer, "tracing_on")).FirstOrDefault();
        // Enabled events of a buffer whose tracing is off still run their probes (the buffer then drops the event).
        if (on == "0") parts.Add("tracing_on 0");
        return string.Join(", ", parts);
    }

    private static List<string> ReadLines(string file)
    {
        try
        {
            return [.. File.ReadAllLines(file).Select(l => l.Trim()).Where(l => l.Length > 0 && !l.StartsWith('#'))];
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return [];
        }
    }

    /// <summary>"pid N (comm)" of every process, other than this one, with a perf_event file descriptor.</summary>
    private static List<string> PerfEventHolders()
    {
        var found = new List<string>();
        if (!Directory.Exists("/proc")) return found;
        foreach (var proc in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(proc), NumberStyles.None, CultureInfo.InvariantCulture, out var pid)
                || pid == Environment.ProcessId)
                continue;
            try
            {
                var open = Directory.EnumerateFileSystemEntries(Path.Combine(proc, "fd"))
                    .Any(fd => new FileInfo(fd).LinkTarget == "anon_inode:[perf_event]");
                if (!open) continue;
                var comm = File.ReadAllText(Path.Combine(proc, "comm")).Trim();
                found.Add($"pid {pid} ({comm})");
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // The process exited while we looked, or its fds are not ours to read.
            }
        }
        return found;
    }
}
