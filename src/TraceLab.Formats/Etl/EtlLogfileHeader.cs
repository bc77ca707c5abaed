using System.Buffers.Binary;
using System.Runtime.InteropServices;

namespace TraceLab.Formats.Etl;

/// <summary>
/// TRACE_LOGFILE_HEADER: the payload of the first event of an .etl file (a system header with hook 0x0000). Its
/// pointer-sized fields (LoggerName, LogFileName: not pointers in files) move everything after them by 8 bytes
/// between the 32-bit (0x110 + strings) and the 64-bit (0x118 + strings) form.
/// </summary>
public sealed record EtlLogfileHeader
{
    public const int ClockRaw = 0;
    public const int ClockQpc = 1;
    public const int ClockSystemTime = 2;
    public const int ClockCpuCycle = 3;

    private const int FixedSize32 = 0x110;

    public int BufferSize { get; init; }
    public byte OsMajor { get; init; }
    public byte OsMinor { get; init; }
    /// <summary>OS build number (ProviderVersion).</summary>
    public int OsBuild { get; init; }
    public int NumberOfProcessors { get; init; }
    /// <summary>FILETIME (UTC) at the end of the session; 0 in an unfinalized file.</summary>
    public long EndTime { get; init; }
    public uint LogFileMode { get; init; }
    public int BuffersWritten { get; init; }
    public int PointerSize { get; init; }
    public long EventsLost { get; init; }
    public int CpuSpeedMHz { get; init; }
    /// <summary>Ticks per second of the QPC clock.</summary>
    public long PerfFreq { get; init; }
    /// <summary>FILETIME (UTC) of the session start, the moment <see cref="StartTimestamp"/> names.</summary>
    public long StartTime { get; init; }
    /// <summary>ReservedFlags: 0 raw, 1 QPC, 2 system time, 3 CPU cycles.</summary>
    public int ClockType { get; init; }
    public long BuffersLost { get; init; }
    public string LoggerName { get; init; } = "";
    public string LogFileName { get; init; } = "";
    /// <summary>The header event's own time stamp: the session start in the session clock (T0).</summary>
    public long StartTimestamp { get; init; }

    /// <summary>Reads the header from the first event's payload; null when the payload is too short.</summary>
    public static EtlLogfileHeader? TryRead(ReadOnlySpan<byte> p, int pointerSize, long startTimestamp)
    {
        var shift = pointerSize == 8 ? 8 : 0;
        if (p.Length < FixedSize32 + shift) return null;
        var late = p[(0xF0 + shift)..];
        var version = BinaryPrimitives.ReadUInt32LittleEndian(p[0x04..]);
        var stringBytes = p[(FixedSize32 + shift)..];
        var strings = MemoryMarshal.Cast<byte, char>(stringBytes[..(stringBytes.Length & ~1)]);
        var loggerEnd = strings.IndexOf('\0');
        var logger = loggerEnd >= 0 ? strings[..loggerEnd] : strings;
        var fileChars = loggerEnd >= 0 ? strings[(loggerEnd + 1)..] : default;
        var fileEnd = fileChars.IndexOf('\0');
        return new EtlLogfileHeader
        {
            BufferSize = BinaryPrimitives.ReadInt32LittleEndian(p),
            OsMajor = (byte)version,
            OsMinor = (byte)(version >> 8),
            OsBuild = BinaryPrimitives.ReadInt32LittleEndian(p[0x08..]),
            NumberOfProcessors = BinaryPrimitives.ReadInt32LittleEndian(p[0x0C..]),
            EndTime = BinaryPrimitives.ReadInt64LittleEndian(p[0x10..]),
            LogFileMode = BinaryPrimitives.ReadUInt32LittleEndian(p[0x20..]),
            BuffersWritten = BinaryPrimitives.ReadInt32LittleEndian(p[0x24..]),
            PointerSize = pointerSize,
            EventsLost = BinaryPrimitives.ReadUInt32LittleEndian(p[0x30..]),
            CpuSpeedMHz = BinaryPrimitives.ReadInt32LittleEndian(p[0x34..]),
            // BootTime at late[0] is not a safe time base (it differs from the QPC origin by seconds).
            PerfFreq = BinaryPrimitives.ReadInt64LittleEndian(late[0x08..]),
            StartTime = BinaryPrimitives.ReadInt64LittleEndian(late[0x10..]),
            ClockType = BinaryPrimitives.ReadInt32LittleEndian(late[0x18..]),
            BuffersLost = BinaryPrimitives.ReadUInt32LittleEndian(late[0x1C..]),
            LoggerName = new string(logger),
            LogFileName = new string(fileEnd >= 0 ? fileChars[..fileEnd] : fileChars),
            StartTimestamp = startTimestamp,
        };
    }

    public string ClockName => ClockType switch
    {
        ClockRaw => "raw",
        ClockQpc => "qpc",
        ClockSystemTime => "systemtime",
        ClockCpuCycle => "cpucycle",
        _ => $"clock {ClockType}",
    };

    /// <summary>Ticks per second of the event time stamps, or 0 when the header gives no usable rate.</summary>
    public long TicksPerSecond => ClockType switch
    {
        ClockSystemTime => 10_000_000,
        ClockCpuCycle => CpuSpeedMHz > 0 ? CpuSpeedMHz * 1_000_000L : 0,
        _ => PerfFreq > 0 ? PerfFreq : 0,
    };
}
