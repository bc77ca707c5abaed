namespace TraceLab.Formats.PerfData;

/// <summary>perf_event_header.type values TraceLab reads (include/uapi/linux/perf_event.h, tools/perf/util/event.h).</summary>
internal static class PerfRecordType
{
    public const uint Lost = 2;
    public const uint Comm = 3;
    public const uint Sample = 9;
    public const uint LostSamples = 13;
    /// <summary>First type perf itself (not the kernel) writes into the file.</summary>
    public const uint UserTypeStart = 64;
    public const uint FinishedRound = 68;
    public const uint Auxtrace = 71;
    public const uint Compressed = 81;
}

/// <summary>perf_event_attr.sample_type bits (include/uapi/linux/perf_event.h).</summary>
internal static class PerfSampleType
{
    public const ulong Ip = 1 << 0;
    public const ulong Tid = 1 << 1;
    public const ulong Time = 1 << 2;
    public const ulong Addr = 1 << 3;
    public const ulong Read = 1 << 4;
    public const ulong Callchain = 1 << 5;
    public const ulong Id = 1 << 6;
    public const ulong Cpu = 1 << 7;
    public const ulong Period = 1 << 8;
    public const ulong StreamId = 1 << 9;
    public const ulong Raw = 1 << 10;
    public const ulong Identifier = 1 << 16;
}

/// <summary>perf_event_attr.read_format bits.</summary>
internal static class PerfReadFormat
{
    public const ulong TotalTimeEnabled = 1 << 0;
    public const ulong TotalTimeRunning = 1 << 1;
    public const ulong Id = 1 << 2;
    public const ulong Group = 1 << 3;
    public const ulong Lost = 1 << 4;
}

/// <summary>Feature bits of the file header (tools/perf/util/header.h, HEADER_*).</summary>
internal static class PerfFeature
{
    public const int TracingData = 1;
    public const int OsRelease = 4;
    public const int NrCpus = 7;
    public const int DirFormat = 24;
    public const int Compressed = 27;
}
