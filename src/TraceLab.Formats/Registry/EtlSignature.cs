using System.Buffers.Binary;

namespace TraceLab.Formats.Registry;

/// <summary>
/// Recognises an ETW .etl file by content. An .etl has no magic number: it is a sequence of buffers, and the first
/// one is the header buffer (WMI_BUFFER_HEADER, 0x48 bytes, BufferType 4) whose first event is the logfile header
/// event (SYSTEM_TRACE_HEADER, marker flags 0xC0, HookId 0): true of kernel-written and relogged files alike.
/// Offsets are those of the public WMI_BUFFER_HEADER and SYSTEM_TRACE_HEADER layouts.
/// </summary>
public static class EtlSignature
{
    public const string Description = "ETW, first buffer a header buffer starting with the logfile header event";

    private const int BufferHeaderSize = 0x48;
    private const int SystemTraceHeaderSize = 0x20;
    private const int BufferTypeHeader = 4;

    /// <summary>Whether <paramref name="head"/> (the file's first bytes) is an .etl's header buffer.</summary>
    public static bool Matches(ReadOnlySpan<byte> head)
    {
        if (head.Length < BufferHeaderSize + 8) return false;
        var bufferSize = BinaryPrimitives.ReadUInt32LittleEndian(head);
        var filled = BinaryPrimitives.ReadUInt32LittleEndian(head[0x30..]);
        var bufferType = BinaryPrimitives.ReadUInt16LittleEndian(head[0x36..]);
        const uint minimum = BufferHeaderSize + SystemTraceHeaderSize;
        if (bufferType != BufferTypeHeader || bufferSize < minimum || filled < minimum || filled > bufferSize) return false;

        // The first event: u16 Version, u8 HeaderType (SYSTEM32 = 1 or SYSTEM64 = 2), u8 flags 0xC0, u16 Size,
        // u16 HookId (0 = EventTrace header).
        var evt = head[BufferHeaderSize..];
        var headerType = evt[2];
        var size = BinaryPrimitives.ReadUInt16LittleEndian(evt[4..]);
        var hookId = BinaryPrimitives.ReadUInt16LittleEndian(evt[6..]);
        return headerType is 1 or 2 && evt[3] == 0xC0 && hookId == 0
            && size >= SystemTraceHeaderSize && size <= filled - BufferHeaderSize;
    }
}
