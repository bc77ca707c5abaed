namespace TraceLab.Formats.PerfData;

/// <summary>
/// perf_event_header.type values TraceLab reads (include/uapi/linux/perf_event.h, tools/perf/util/event.h).
/// </summary>
internal static class PerfRecordType
{
    public const uint Mmap = 1;
    public const uint Lost = 2;
    public const uint Comm = 3;
    public const uint Exit = 4;
    public const uint Fork = 7;
    public const uint Sample = 9;
    public const uint Mmap2 = 10;
    public const uint LostSamples = 13;
    /// <summary>Context switch of a task the event follows (per-task event): misc tells in from out.</summary>
    public const uint Switch = 14;
    /// <summary>
    /// Context switch on a CPU (CPU-wide event, perf record -a --switch-events): with the other task's pid/tid.
    /// </summary>
    public const uint SwitchCpuWide = 15;
    /// <summary>First type perf itself (not the kernel) writes into the file.</summary>
    public const uint UserTypeStart = 64;
    public const uint FinishedRound = 68;
    public const uint Auxtrace = 71;
    public const uint Compressed = 81;
    /// <summary>
    /// Newer perf: a COMPRESSED record with a u64 data size after the header and the record padded to 8 bytes.
    /// </summary>
    public const uint Compressed2 = 83;

    public static bool IsCompressed(uint type) => type is Compressed or Compressed2;

    /// <summary>Types below this are counted per type by the reader (every kernel and perf type so far).</summary>
    public const int Counted = 128;
}

/// <summary>perf_event_header.misc bits of SWITCH records (include/uapi/linux/perf_event.h).</summary>
internal static class PerfSwitchMisc
{
    public const ushort Out = 1 << 13;
    /// <summary>Set with <see cref="Out"/> when the task was preempted (still runnable).</summary>
    public const ushort OutPreempt = 1 << 14;
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
    public const ulong BranchStack = 1 << 11;
    public const ulong RegsUser = 1 << 12;
    public const ulong StackUser = 1 << 13;
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
    public const int BuildId = 2;
    public const int OsRelease = 4;
    public const int NrCpus = 7;
    public const int DirFormat = 24;
    public const int Compressed = 27;
}
