using System.Buffers.Binary;

namespace TraceLab.Formats.Etw;

/// <summary>The Thread SetName payload: ProcessId, ThreadId, then the new NUL-terminated UTF-16 name.</summary>
public readonly ref struct ThreadSetNameRecord
{
    public const int ProcessIdOffset = 0;
    public const int ThreadIdOffset = 4;
    public const int NameOffset = 8;

    public ThreadSetNameRecord(int processId, int threadId, ReadOnlySpan<byte> nameUtf16)
    {
        ProcessId = processId;
        ThreadId = threadId;
        NameUtf16 = nameUtf16;
    }

    public int ProcessId { get; }
    public int ThreadId { get; }
    public ReadOnlySpan<byte> NameUtf16 { get; }

    public static bool TryRead(ReadOnlySpan<byte> payload, out ThreadSetNameRecord record)
    {
        if (payload.Length < NameOffset)
        {
            record = default;
            return false;
        }

        record = new ThreadSetNameRecord(
            BinaryPrimitives.ReadInt32LittleEndian(payload[ProcessIdOffset..]),
            BinaryPrimitives.ReadInt32LittleEndian(payload[ThreadIdOffset..]),
            payload[NameOffset..]);
        return true;
    }
}
