using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.PerfData;

/// <summary>Everything outside the data section of a perf.data file, as parsed by <see cref="PerfDataMetadataParser"/>.</summary>
internal sealed class PerfDataMetadata
{
    public List<PerfEventAttr> Attrs { get; } = new();
    public long DataOffset { get; set; }
    public long DataSize { get; set; }
    /// <summary>Formats from HEADER_TRACING_DATA (the tracefs format files perf copied at record time).</summary>
    public List<FtraceEventFormat> Formats { get; } = new();
    public int SkippedFormats { get; set; }
    public string Cmdlines { get; set; } = "";
    public string? OsRelease { get; set; }
    public int CpuCount { get; set; }
}
