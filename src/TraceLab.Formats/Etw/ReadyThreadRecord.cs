using System.Buffers.Binary;

namespace TraceLab.Formats.Etw;

/// <summary>The ReadyThread payload (8 bytes): which thread was made ready, and from what context.</summary>
public readonly record struct ReadyThreadRecord(int ThreadId, byte AdjustReason, sbyte AdjustIncrement, byte Flag)
{
    public const int ThreadIdOffset = 0;
    public const int AdjustReasonOffset = 4;
    public const int AdjustIncrementOffset = 5;
    public const int FlagOffset = 6;
    /// <summary>Bytes needed to read every field above (the last byte is reserved).</summary>
    public const int MinLength = 7;

    /// <summary>
    /// Flag bit: readied by a deferred procedure call, so the header thread is only the interrupted one.
    /// </summary>
    public const byte ReadiedFromDpc = 1;

    public bool FromDpc => (Flag & ReadiedFromDpc) != 0;

    public static bool TryRead(ReadOnlySpan<byte> payload, out ReadyThreadRecord record)
    {
        if (payload.Length < MinLength)
        {
            record = default;
            return false;
        }

        record = new ReadyThreadRecord(
            BinaryPrimitives.ReadInt32LittleEndian(payload[ThreadIdOffset..]),
            payload[AdjustReasonOffset],
            (sbyte)payload[AdjustIncrementOffset],
            payload[FlagOffset]);
        return true;
    }
}
