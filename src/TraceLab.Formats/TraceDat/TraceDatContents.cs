namespace TraceLab.Formats.TraceDat;

/// <summary>
/// Everything <see cref="TraceDatWriter"/> puts into a trace.dat: the tracefs metadata texts, options, and one raw
/// ring-buffer data file per CPU (as read from per_cpu/cpuN/trace_pipe_raw; copied, never loaded into memory).
/// </summary>
public sealed class TraceDatContents
{
    /// <summary>Text of events/header_page (the page size written to the file is derived from it).</summary>
    public required string HeaderPage { get; init; }

    /// <summary>Text of events/header_event.</summary>
    public required string HeaderEvent { get; init; }

    /// <summary>Format texts of events/ftrace/*/format (at least "print" so markers display).</summary>
    public List<string> FtraceFormats { get; } = new();

    /// <summary>Format texts of all other events, grouped by system name (e.g. "sched").</summary>
    public Dictionary<string, List<string>> EventFormats { get; } = new(StringComparer.Ordinal);

    /// <summary>/proc/kallsyms text; empty is valid.</summary>
    public string Kallsyms { get; set; } = "";

    /// <summary>printk_formats text; empty is valid.</summary>
    public string PrintkFormats { get; set; } = "";

    /// <summary>saved_cmdlines text: "pid comm" lines.</summary>
    public string SavedCmdlines { get; set; } = "";

    /// <summary>Trace clock name ("mono", "local", ...) or the whole trace_clock file text with the [selected] one.</summary>
    public string TraceClock { get; set; } = "local";

    /// <summary>uname text such as "Linux host 6.18.0 x86_64"; omitted when null.</summary>
    public string? Uname { get; set; }

    /// <summary>Per-CPU stats texts as read from per_cpu/cpuN/stats, indexed by CPU; missing entries are written empty.</summary>
    public List<string> CpuStats { get; } = new();

    /// <summary>One raw page file per CPU, indexed by CPU; its length must be a whole number of pages.</summary>
    public List<string> CpuDataFiles { get; } = new();

    public int CpuCount => CpuDataFiles.Count;

    public void AddEventFormat(string system, string formatText)
    {
        if (!EventFormats.TryGetValue(system, out var list)) EventFormats[system] = list = new List<string>();
        list.Add(formatText);
    }

    /// <summary>
    /// Fills the metadata from a mounted tracefs: header_page/header_event, ftrace/print, the given events
    /// ("system/name"), saved_cmdlines, trace_clock and per-CPU stats of <paramref name="instanceDir"/>.
    /// </summary>
    public static TraceDatContents FromTracefs(string tracefsRoot, string instanceDir, IEnumerable<string> events, IReadOnlyList<string> cpuDataFiles)
    {
        var c = new TraceDatContents
        {
            HeaderPage = File.ReadAllText(Path.Combine(tracefsRoot, "events", "header_page")),
            HeaderEvent = File.ReadAllText(Path.Combine(tracefsRoot, "events", "header_event")),
            SavedCmdlines = ReadOrEmpty(Path.Combine(tracefsRoot, "saved_cmdlines")),
            TraceClock = ReadOrEmpty(Path.Combine(instanceDir, "trace_clock")),
            Uname = ReadUname(),
        };
        c.FtraceFormats.Add(File.ReadAllText(Path.Combine(tracefsRoot, "events", "ftrace", "print", "format")));
        foreach (var ev in events)
        {
            var slash = ev.IndexOf('/');
            if (slash <= 0) throw new ArgumentException($"event '{ev}' is not in system/name form", nameof(events));
            var system = ev[..slash];
            c.AddEventFormat(system, File.ReadAllText(Path.Combine(tracefsRoot, "events", system, ev[(slash + 1)..], "format")));
        }

        for (var cpu = 0; cpu < cpuDataFiles.Count; cpu++)
        {
            c.CpuDataFiles.Add(cpuDataFiles[cpu]);
            c.CpuStats.Add(ReadOrEmpty(Path.Combine(instanceDir, "per_cpu", $"cpu{cpu}", "stats")));
        }

        if (c.TraceClock.Length == 0) c.TraceClock = "local";
        return c;
    }

    private static string ReadOrEmpty(string path) => File.Exists(path) ? File.ReadAllText(path) : "";

    private static string? ReadUname()
    {
        var release = ReadOrEmpty("/proc/sys/kernel/osrelease").Trim();
        if (release.Length == 0) return null;
        var host = ReadOrEmpty("/proc/sys/kernel/hostname").Trim();
        return $"Linux {host} {release} {System.Runtime.InteropServices.RuntimeInformation.OSArchitecture switch
        {
            System.Runtime.InteropServices.Architecture.X64 => "x86_64",
            System.Runtime.InteropServices.Architecture.Arm64 => "aarch64",
            var a => a.ToString().ToLowerInvariant(),
        }}";
    }
}
