namespace TraceLab.Formats.TraceDat;

/// <summary>
/// trace-cmd option ids (trace-cmd.dat(5)); v7 uses the section ids 16..21 for the metadata sections too.
/// </summary>
internal static class TraceDatOptionId
{
    public const ushort Done = 0;
    public const ushort CpuStat = 2;
    public const ushort Buffer = 3;
    public const ushort TraceClock = 4;
    public const ushort Uname = 5;
    public const ushort Offset = 7;
    public const ushort CpuCount = 8;
    public const ushort Version = 9;
    public const ushort TimeShift = 12;
    public const ushort Tsc2Nsec = 14;
    public const ushort HeaderInfo = 16;
    public const ushort FtraceEvents = 17;
    public const ushort EventFormats = 18;
    public const ushort Kallsyms = 19;
    public const ushort Printk = 20;
    public const ushort Cmdlines = 21;
    public const ushort BufferText = 22;
}
