using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// One CPU's ring-buffer pages inside the file. When <paramref name="Compressed"/>, the range holds trace-cmd's chunk
/// stream (a chunk count, then per chunk its compressed and decompressed sizes and the compressed bytes).
/// </summary>
internal readonly record struct CpuDataRange(string Buffer, int Cpu, long Offset, long Size, bool Compressed = false);

/// <summary>
/// Event data a salvaging read leaves out: from <paramref name="Offset"/> to the end of the CPU's range.
/// </summary>
internal sealed record DataDamage(string Buffer, int Cpu, long Offset, long End, string Reason);

/// <summary>
/// Everything before the event data of a trace.dat, as parsed by <see cref="TraceDatMetadataParser"/>.
/// </summary>
internal sealed class TraceDatMetadata
{
    public int Version { get; set; }
    public int PageSize { get; set; }
    /// <summary>The v7 header's compression algorithm ("none" for v6).</summary>
    public string Compression { get; set; } = "none";
    /// <summary>
    /// Where the recorded kernel's /proc/kallsyms is: v6, the offset of its length field; v7, its section's offset;
    /// -1 when the file has none. Read only when stacks need kernel names
    /// (<see cref="TraceDatMetadataParser.Kallsyms"/>).
    /// </summary>
    public long KallsymsAt { get; set; } = -1;
    public HeaderPageLayout? HeaderPage { get; set; }
    public List<FtraceEventFormat> Formats { get; } = new();
    /// <summary>Formats whose text the parser did not understand; left out.</summary>
    public int SkippedFormats { get; set; }
    /// <summary>CPU data cut at the end of the file (salvaging reads only).</summary>
    public List<DataDamage> Damage { get; } = new();
    public string Cmdlines { get; set; } = "";
    public int CpuCount { get; set; }
    public string? TraceClock { get; set; }
    public string? Uname { get; set; }
    public List<CpuDataRange> Data { get; } = new();
    /// <summary>Buffer names in file order ("" = the top-level buffer), each once.</summary>
    public List<string> Buffers { get; } = new();
    /// <summary>Trace clock per buffer, from v7 BUFFER options.</summary>
    public Dictionary<string, string> BufferClocks { get; } = new(StringComparer.Ordinal);
    /// <summary>Buffers that hold latency-format text (v7 BUFFER_TEXT), which this reader cannot decode.</summary>
    public List<string> TextBuffers { get; } = new();
    /// <summary>Lost events (overrun + dropped) per buffer name ("" = top level), per CPU.</summary>
    public Dictionary<string, Dictionary<int, long>> LostByBuffer { get; } = new(StringComparer.Ordinal);
    /// <summary>TSC2NSEC, TIME_SHIFT and OFFSET options: how raw page timestamps become nanoseconds.</summary>
    public TimestampConversion Time { get; } = new();

    public void AddBuffer(string name)
    {
        if (!Buffers.Contains(name)) Buffers.Add(name);
    }
}
