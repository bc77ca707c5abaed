using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.TraceDat;

/// <summary>One CPU's ring-buffer pages inside the file.</summary>
internal readonly record struct CpuDataRange(string Buffer, int Cpu, long Offset, long Size);

/// <summary>Everything before the event data of a trace.dat, as parsed by <see cref="TraceDatMetadataParser"/>.</summary>
internal sealed class TraceDatMetadata
{
    public int Version { get; set; }
    public int PageSize { get; set; }
    public HeaderPageLayout? HeaderPage { get; set; }
    public List<FtraceEventFormat> Formats { get; } = new();
    public string Cmdlines { get; set; } = "";
    public int CpuCount { get; set; }
    public string? TraceClock { get; set; }
    public string? Uname { get; set; }
    public List<CpuDataRange> Data { get; } = new();
    /// <summary>Lost events (overrun + dropped) per buffer name ("" = top level), per CPU.</summary>
    public Dictionary<string, Dictionary<int, long>> LostByBuffer { get; } = new(StringComparer.Ordinal);
}
