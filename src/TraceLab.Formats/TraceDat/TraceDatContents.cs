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

    /// <summary>
    /// Trace clock name ("mono", "local", ...) or the whole trace_clock file text with the [selected] one.
    /// </summary>
    public string TraceClock { get; set; } = "local";

    /// <summary>uname text such as "Linux host 6.18.0 x86_64"; omitted when null.</summary>
    public string? Uname { get; set; }

    /// <summary>
    /// Per-CPU stats texts as read from per_cpu/cpuN/stats, indexed by CPU; missing entries are written empty.
    /// </summary>
    public List<string> CpuStats { get; } = new();

    /// <summary>One raw page file per CPU, indexed by CPU; its length must be a whole number of pages.</summary>
    public List<string> CpuDataFiles { get; } = new();

    public int CpuCount => CpuDataFiles.Count;

    public void AddEventFormat(string system, string formatText)
    {
        if (!EventFormats.TryGetValue(system, out var list)) EventFormats[system] = list = new List<string>();
        list.Add(formatText);
    }
}
