using System.Buffers.Binary;

namespace TraceLab.Formats.Etw;

/// <summary>
/// PerfInfo SysClEnter (SysCallAddress, pointer-sized) and SysClExit (SysCallNtStatus, 32 bits) payloads.
/// </summary>
public static class SysCallRecord
{
    public static bool TryReadEnter(ReadOnlySpan<byte> payload, int pointerSize, out long sysCallAddress)
    {
        if (pointerSize == 4)
        {
            var ok = payload.Length >= 4;
            sysCallAddress = ok ? BinaryPrimitives.ReadUInt32LittleEndian(payload) : 0;
            return ok;
        }

        var ok64 = payload.Length >= 8;
        sysCallAddress = ok64 ? BinaryPrimitives.ReadInt64LittleEndian(payload) : 0;
        return ok64;
    }

    /// <summary>
    /// The status is read as the signed NTSTATUS it is, so failures are negative as on Linux (-errno).
    /// </summary>
    public static bool TryReadExit(ReadOnlySpan<byte> payload, out int ntStatus)
    {
        var ok = payload.Length >= 4;
        ntStatus = ok ? BinaryPrimitives.ReadInt32LittleEndian(payload) : 0;
        return ok;
    }
}
