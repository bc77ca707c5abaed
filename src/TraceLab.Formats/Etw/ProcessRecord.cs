using System.Buffers.Binary;

namespace TraceLab.Formats.Etw;

/// <summary>
/// The Process Start/End/DCStart/DCEnd/Defunct payload (versions 3 to 5): UniqueProcessKey (pointer), ProcessId,
/// ParentId, SessionId, ExitStatus, DirectoryTableBase (pointer), Flags (version 4 and later), the user SID (4 zero
/// bytes, or a TOKEN_USER of two pointers followed by the SID itself), then the 8-bit NUL-terminated ImageFileName.
/// Older versions are read for the process id only.
/// </summary>
public readonly ref struct ProcessRecord(int processId, int parentId, ReadOnlySpan<byte> imageName)
{
    public int ProcessId { get; } = processId;
    public int ParentId { get; } = parentId;
    /// <summary>ImageFileName without its NUL; empty when the version does not carry it or it is cut off.</summary>
    public ReadOnlySpan<byte> ImageName { get; } = imageName;

    private const int SidHeaderSize = 8;
    private const int SidSubAuthoritySize = 4;

    public static bool TryRead(ReadOnlySpan<byte> payload, int version, int pointerSize, out ProcessRecord record)
    {
        record = default;
        var pidAt = pointerSize;
        if (payload.Length < pidAt + 8) return false;
        var pid = BinaryPrimitives.ReadInt32LittleEndian(payload[pidAt..]);
        var parent = BinaryPrimitives.ReadInt32LittleEndian(payload[(pidAt + 4)..]);
        record = new ProcessRecord(pid, parent, default);
        if (version < 3) return true;

        var sidAt = 2 * pointerSize + (version >= 4 ? 20 : 16);
        var nameAt = SkipSid(payload, sidAt, pointerSize);
        if (nameAt < 0) return true;
        var name = payload[nameAt..];
        var nul = name.IndexOf((byte)0);
        if (nul < 0) return true;
        record = new ProcessRecord(pid, parent, name[..nul]);
        return true;
    }

    /// <summary>Where the field after the user SID starts, or -1 when the SID runs past the payload.</summary>
    private static int SkipSid(ReadOnlySpan<byte> payload, int at, int pointerSize)
    {
        if (payload.Length - at < 4) return -1;
        if (BinaryPrimitives.ReadUInt32LittleEndian(payload[at..]) == 0) return at + 4;
        var sid = at + 2 * pointerSize;
        if (payload.Length - sid < SidHeaderSize) return -1;
        var end = sid + SidHeaderSize + SidSubAuthoritySize * payload[sid + 1];
        return end <= payload.Length ? end : -1;
    }
}
