using System.Buffers.Binary;

namespace TraceLab.Formats.Etw;

/// <summary>The CSwitch payload fields TraceLab uses (priorities are int8, ids uint32 that fit an int).</summary>
public readonly record struct CSwitchRecord(
    int NewThreadId, int OldThreadId, int NewThreadPriority, int OldThreadPriority,
    byte OldThreadWaitReason, byte OldThreadWaitMode, KThreadState OldThreadState)
{
    public const int NewThreadIdOffset = 0;
    public const int OldThreadIdOffset = 4;
    public const int NewThreadPriorityOffset = 8;
    public const int OldThreadPriorityOffset = 9;
    public const int OldThreadWaitReasonOffset = 12;
    public const int OldThreadWaitModeOffset = 13;
    public const int OldThreadStateOffset = 14;
    /// <summary>Bytes needed to read every field above; the documented payload is 24, the rest is not used.</summary>
    public const int MinLength = OldThreadStateOffset + 1;

    public static bool TryRead(ReadOnlySpan<byte> payload, out CSwitchRecord record)
    {
        if (payload.Length < MinLength)
        {
            record = default;
            return false;
        }

        record = new CSwitchRecord(
            BinaryPrimitives.ReadInt32LittleEndian(payload[NewThreadIdOffset..]),
            BinaryPrimitives.ReadInt32LittleEndian(payload[OldThreadIdOffset..]),
            (sbyte)payload[NewThreadPriorityOffset],
            (sbyte)payload[OldThreadPriorityOffset],
            payload[OldThreadWaitReasonOffset],
            payload[OldThreadWaitModeOffset],
            (KThreadState)payload[OldThreadStateOffset]);
        return true;
    }
}
