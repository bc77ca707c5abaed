using System.Buffers.Binary;

namespace TraceLab.Formats.Etw;

/// <summary>
/// The Thread Start/End/DCStart/DCEnd payload. Version 2 and later: ProcessId, ThreadId, then seven pointers
/// (StackBase, StackLimit, UserStackBase, UserStackLimit, StartAddr, Win32StartAddr, TebBase) and SubProcessTag;
/// version 3 appends four priority/flag bytes and a NUL-terminated UTF-16 ThreadName. Version 0 had the two ids the
/// other way round. Offsets match TraceEvent's ThreadTraceData (HostOffset(x, n) = x + n * (pointer size - 4)).
/// The Thread SetName payload has the same three fields, the name right after the two ids
/// (<see cref="TryReadSetName"/>).
/// </summary>
public readonly ref struct ThreadRecord(int processId, int threadId, ReadOnlySpan<byte> nameUtf16)
{
    public const int ProcessIdOffset = 0;
    public const int ThreadIdOffset = 4;
    /// <summary>ThreadName offset with 4-byte pointers; 28 more with 8-byte ones (seven pointers).</summary>
    public const int ThreadName32Offset = 44;
    private const int PointersBeforeName = 7;
    public const int MinLength = 8;
    /// <summary>Where SetName's new name starts.</summary>
    public const int SetNameOffset = 8;

    public int ProcessId { get; } = processId;
    public int ThreadId { get; } = threadId;
    /// <summary>
    /// The ThreadName bytes up to the end of the payload (NUL terminator included if logged); empty if absent.
    /// </summary>
    public ReadOnlySpan<byte> NameUtf16 { get; } = nameUtf16;

    public static int ThreadNameOffset(int pointerSize) => ThreadName32Offset + PointersBeforeName * (pointerSize - 4);

    public static bool TryRead(ReadOnlySpan<byte> payload, int version, int pointerSize, out ThreadRecord record)
    {
        if (payload.Length < MinLength)
        {
            record = default;
            return false;
        }

        var a = BinaryPrimitives.ReadInt32LittleEndian(payload[ProcessIdOffset..]);
        var b = BinaryPrimitives.ReadInt32LittleEndian(payload[ThreadIdOffset..]);
        var nameAt = ThreadNameOffset(pointerSize);
        var name = version >= 3 && payload.Length > nameAt ? payload[nameAt..] : default;
        record = version == 0 ? new ThreadRecord(b, a, name) : new ThreadRecord(a, b, name);
        return true;
    }

    /// <summary>The Thread SetName payload: ProcessId, ThreadId, then the new NUL-terminated UTF-16 name.</summary>
    public static bool TryReadSetName(ReadOnlySpan<byte> payload, out ThreadRecord record)
    {
        if (payload.Length < SetNameOffset)
        {
            record = default;
            return false;
        }

        record = new ThreadRecord(
            BinaryPrimitives.ReadInt32LittleEndian(payload[ProcessIdOffset..]),
            BinaryPrimitives.ReadInt32LittleEndian(payload[ThreadIdOffset..]),
            payload[SetNameOffset..]);
        return true;
    }
}
