namespace TraceLab.Formats.PerfData;

/// <summary>The parts of one perf_event_attr (plus its sample ids) that decoding the data section needs.</summary>
internal sealed record PerfEventAttr(
    uint Type, ulong Config, ulong SampleType, ulong ReadFormat, bool SampleIdAll, ulong[] Ids)
{
    public const uint TracepointType = 2;

    public bool IsTracepoint => Type == TracepointType;

    /// <summary>attr.context_switch: the kernel writes SWITCH (per task) or SWITCH_CPU_WIDE records for it.</summary>
    public bool ContextSwitch { get; init; }

    /// <summary>
    /// attr.sample_regs_user: which user registers PERF_SAMPLE_REGS_USER holds (perf_regs.h bit order).
    /// </summary>
    public ulong RegsUser { get; init; }
}
