using System.Buffers.Binary;

namespace TraceLab.Formats.Etl;

/// <summary>
/// The WMI_BUFFER_HEADER (0x48 bytes) that starts every record of an .etl file: how many bytes the record occupies
/// on disk, how many of them (header included) hold events, which CPU logged them and in which order it flushed them.
/// Fields Windows leaves as junk in files (SavedOffset, CurrentOffset, the clock union, the buffer time stamp) are
/// not read: docs/formats.md, ".etl".
/// </summary>
public readonly record struct EtlBufferHeader(
    int BufferSize, int Offset, long SequenceNumber, int Processor, ushort Flags, ushort BufferType)
{
    public const int Size = 0x48;

    public const int BufferSizeOffset = 0x00;
    public const int SequenceNumberOffset = 0x18;
    public const int ClientContextOffset = 0x28;
    public const int FilledOffset = 0x30;
    public const int BufferFlagOffset = 0x34;
    public const int BufferTypeOffset = 0x36;

    public const ushort FlagEventsLost = 0x0002;
    public const ushort FlagBufferLost = 0x0004;
    /// <summary>ClientContext holds a 16-bit processor index (mask 0x7FF) instead of an 8-bit processor
    /// number.</summary>
    public const ushort FlagProcessorIndex = 0x0020;
    /// <summary>The bytes after the header are MS-XCA Plain LZ77; they decompress to Offset − 0x48 bytes.</summary>
    public const ushort FlagCompressed = 0x0040;

    public const ushort TypeHeader = 4;

    public bool IsCompressed => (Flags & FlagCompressed) != 0;

    /// <summary>The logger flagged events or whole buffers of this CPU as lost around this buffer.</summary>
    public bool MarksLoss => (Flags & (FlagEventsLost | FlagBufferLost)) != 0;

    /// <summary>Bytes of events after the header (decompressed size when compressed).</summary>
    public int EventBytes => Offset - Size;

    public static EtlBufferHeader Read(ReadOnlySpan<byte> header)
    {
        var flags = BinaryPrimitives.ReadUInt16LittleEndian(header[BufferFlagOffset..]);
        var cpu = (flags & FlagProcessorIndex) != 0
            ? BinaryPrimitives.ReadUInt16LittleEndian(header[ClientContextOffset..]) & 0x7FF
            : header[ClientContextOffset];
        return new EtlBufferHeader(
            BinaryPrimitives.ReadInt32LittleEndian(header[BufferSizeOffset..]),
            BinaryPrimitives.ReadInt32LittleEndian(header[FilledOffset..]),
            BinaryPrimitives.ReadInt64LittleEndian(header[SequenceNumberOffset..]),
            cpu,
            flags,
            BinaryPrimitives.ReadUInt16LittleEndian(header[BufferTypeOffset..]));
    }
}
