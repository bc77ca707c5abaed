using System.Buffers.Binary;
using System.Text;
using TraceLab.Formats.Etw;

namespace TraceLab.Formats.Tests.Etw;

/// <summary>
/// Builds kernel event payloads byte by byte at the offsets the reference documents
/// (the ETW kernel event layouts, TraceEvent's ThreadTraceData), independently of the mapper's constants.
/// </summary>
internal static class EtwPayloads
{
    public static byte[] CSwitch(int newTid, int oldTid, sbyte newPrio, sbyte oldPrio, byte waitReason, byte waitMode,
        KThreadState oldState)
    {
        var b = new byte[24];
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(0), (uint)newTid);
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(4), (uint)oldTid);
        b[8] = (byte)newPrio;
        b[9] = (byte)oldPrio;
        b[10] = 2; // PreviousCState
        b[11] = 0x5A; // SpareByte
        b[12] = waitReason;
        b[13] = waitMode;
        b[14] = (byte)oldState;
        b[15] = 3; // OldThreadWaitIdealProcessor
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(16), 777); // NewThreadWaitTime
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(20), 0xDEADBEEF); // Reserved
        return b;
    }

    public static byte[] ReadyThread(int readiedTid, byte adjustReason = 1, sbyte adjustIncrement = 1, byte flag = 0)
    {
        var b = new byte[8];
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(0), (uint)readiedTid);
        b[4] = adjustReason;
        b[5] = (byte)adjustIncrement;
        b[6] = flag;
        b[7] = 0xEE; // Reserved
        return b;
    }

    /// <summary>
    /// Thread event, version 2 or 3: ProcessId, ThreadId, 7 pointers (filled with junk so a wrong offset shows),
    /// SubProcessTag, and from version 3 four bytes of priorities/flags plus the NUL-terminated UTF-16 name.
    /// </summary>
    public static byte[] Thread(int pointerSize, int pid, int tid, string? name, int version = 3)
    {
        var subProcessTagAt = 8 + 7 * pointerSize;   // 36 or 64
        var nameAt = subProcessTagAt + 8;             // 44 or 72
        var nameBytes = version >= 3 ? Encoding.Unicode.GetBytes((name ?? "") + "\0") : [];
        var b = new byte[(version >= 3 ? nameAt : subProcessTagAt + 4) + nameBytes.Length];
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(0), pid);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(4), tid);
        b.AsSpan(8, 7 * pointerSize).Fill(0xAB);
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(subProcessTagAt), 0x11223344);
        if (version >= 3)
        {
            b[subProcessTagAt + 4] = 8; // BasePriority
            b[subProcessTagAt + 5] = 5; // PagePriority
            b[subProcessTagAt + 6] = 2; // IoPriority
            b[subProcessTagAt + 7] = 0; // ThreadFlags
            nameBytes.CopyTo(b, nameAt);
        }

        return b;
    }

    public static byte[] SetName(int pid, int tid, string name)
    {
        var nameBytes = Encoding.Unicode.GetBytes(name + "\0");
        var b = new byte[8 + nameBytes.Length];
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(0), pid);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(4), tid);
        nameBytes.CopyTo(b, 8);
        return b;
    }

    public static byte[] SysClEnter(int pointerSize, ulong address)
    {
        var b = new byte[pointerSize];
        if (pointerSize == 8) BinaryPrimitives.WriteUInt64LittleEndian(b, address);
        else BinaryPrimitives.WriteUInt32LittleEndian(b, (uint)address);
        return b;
    }

    public static byte[] SysClExit(uint ntStatus)
    {
        var b = new byte[4];
        BinaryPrimitives.WriteUInt32LittleEndian(b, ntStatus);
        return b;
    }

    public static EtwEventHeader ThreadHeader(
        byte opcode, long ts, int cpu, int tid, int pointerSize = 8, byte version = 3) =>
        new(EtwKernelEvents.ThreadGuid, opcode, version, ts, cpu, tid, pointerSize);

    public static EtwEventHeader PerfInfoHeader(byte opcode, long ts, int cpu, int tid, int pointerSize = 8) =>
        new(EtwKernelEvents.PerfInfoGuid, opcode, 2, ts, cpu, tid, pointerSize);
}
