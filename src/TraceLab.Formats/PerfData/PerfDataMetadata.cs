using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// Everything outside the data section of a perf.data file, as parsed by <see cref="PerfDataMetadataParser"/>.
/// </summary>
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
    /// <summary>HEADER_NRCPUS nr_cpus_online when recorded (0: unknown).</summary>
    public int OnlineCpus { get; set; }
    /// <summary>
    /// HEADER_COMPRESSED: the data section holds zstd-compressed records (perf record -z); null when absent.
    /// </summary>
    public PerfCompression? Compression { get; set; }
    /// <summary>HEADER_BUILD_ID: the build-id perf saw for each file it found samples in.</summary>
    public List<PerfBuildId> BuildIds { get; } = new();
}

/// <summary>One HEADER_BUILD_ID entry: a file's build-id at recording time (pid -1: the kernel's).</summary>
internal sealed record PerfBuildId(int Pid, string Path, byte[] BuildId);

/// <summary>HEADER_COMPRESSED: zstd level and mmap_len, the most one COMPRESSED record inflates to.</summary>
internal sealed record PerfCompression(int Level, uint MmapLength);
