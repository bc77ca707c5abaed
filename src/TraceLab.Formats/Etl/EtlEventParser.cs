using System.Buffers.Binary;

namespace TraceLab.Formats.Etl;

/// <summary>What <see cref="EtlEventParser.Next"/> found at a position of a buffer's event bytes.</summary>
public enum EtlParseResult
{
    Event,
    /// <summary>The events end here: the buffer's bytes are used up, or the 0xFF fill begins.</summary>
    End,
    /// <summary>The bytes here are no event record (bad marker, a size below its header or past the buffer).</summary>
    Damaged,
}

/// <summary>
/// Reads event records from a buffer's event bytes (the bytes after the 0x48-byte buffer header up to its Offset).
/// Records start with a 32-bit marker whose top byte is 0xC0 (0x90 for WPP messages) and whose byte 2 is the header
/// type; kernel-style headers (system, compact, perfinfo) keep the version in the low 16 bits and the size at +4,
/// the others keep the size in the low 16 bits. Records are 8-byte aligned; the size excludes the padding.
/// Offsets and rules: docs/formats.md, ".etl".
/// </summary>
public static class EtlEventParser
{
    public const int SystemHeaderSize = 0x20;
    public const int CompactHeaderSize = 0x18;
    public const int PerfInfoHeaderSize = 0x10;
    public const int FullHeaderSize = 0x30;
    public const int InstanceHeaderSize = 0x48;
    public const int EventHeaderSize = 0x50;
    public const int MessageHeaderSize = 8;

    /// <summary>Version bits that announce extension items after a kernel-style header (PEBS index, PMC
    /// counters).</summary>
    private const ushort PebsIndexFlag = 0x8000;
    private const ushort PmcCounterMask = 0x0700;
    private const ushort ExtendedInfoFlag = 0x0001;
    private const int ExtendedItemHeaderSize = 8;

    /// <summary>Parses the record at <paramref name="at"/>; on <see cref="EtlParseResult.Event"/> fills <paramref
    /// name="r"/>.</summary>
    public static EtlParseResult Next(ReadOnlySpan<byte> events, int at, ref EtlEventRecord r)
    {
        if ((uint)at >= (uint)events.Length || events.Length - at < 4) return EtlParseResult.End;
        var rest = events[at..];
        var marker = BinaryPrimitives.ReadUInt32LittleEndian(rest);
        if (marker == uint.MaxValue) return EtlParseResult.End;
        var top = (byte)(marker >> 24);
        var type = (byte)(marker >> 16);
        if (top == 0x90) return SizeFirst(rest, EtlHeaderKind.Message, MessageHeaderSize, 8, ref r);
        if (top != 0xC0) return EtlParseResult.Damaged;
        return type switch
        {
            0x01 => Kernel(rest, EtlHeaderKind.System, SystemHeaderSize, 4, ref r),
            0x02 => Kernel(rest, EtlHeaderKind.System, SystemHeaderSize, 8, ref r),
            0x03 => Kernel(rest, EtlHeaderKind.Compact, CompactHeaderSize, 4, ref r),
            0x04 => Kernel(rest, EtlHeaderKind.Compact, CompactHeaderSize, 8, ref r),
            0x10 => Kernel(rest, EtlHeaderKind.PerfInfo, PerfInfoHeaderSize, 4, ref r),
            0x11 => Kernel(rest, EtlHeaderKind.PerfInfo, PerfInfoHeaderSize, 8, ref r),
            0x0A => Classic(rest, EtlHeaderKind.Full, FullHeaderSize, 4, ref r),
            0x14 => Classic(rest, EtlHeaderKind.Full, FullHeaderSize, 8, ref r),
            0x0B => Classic(rest, EtlHeaderKind.Instance, InstanceHeaderSize, 4, ref r),
            0x15 => Classic(rest, EtlHeaderKind.Instance, InstanceHeaderSize, 8, ref r),
            0x12 => WithEventHeader(rest, 4, ref r),
            0x13 => WithEventHeader(rest, 8, ref r),
            // Unknown kinds: every documented non-kernel header keeps its size in the low 16 bits.
            _ => SizeFirst(rest, EtlHeaderKind.Unknown, 4, 8, ref r),
        };
    }

    private static EtlParseResult Kernel(ReadOnlySpan<byte> rest, EtlHeaderKind kind, int fixedSize, int pointerSize,
        ref EtlEventRecord r)
    {
        if (rest.Length < fixedSize) return EtlParseResult.Damaged;
        var version = BinaryPrimitives.ReadUInt16LittleEndian(rest);
        int size = BinaryPrimitives.ReadUInt16LittleEndian(rest[4..]);
        var extensions = ((version & PmcCounterMask) >> 8) * 8 + ((version & PebsIndexFlag) != 0 ? 8 : 0);
        var payloadAt = fixedSize + extensions;
        if (size < payloadAt || size > rest.Length) return EtlParseResult.Damaged;
        r.Kind = kind;
        r.PointerSize = pointerSize;
        r.Stride = Align8(size);
        r.Hook = BinaryPrimitives.ReadUInt16LittleEndian(rest[6..]);
        r.Guid = default;
        r.Opcode = (byte)r.Hook;
        r.Version = (byte)version;
        r.EventId = 0;
        if (kind == EtlHeaderKind.PerfInfo)
        {
            r.ThreadId = -1;
            r.ProcessId = -1;
            r.RawTimestamp = BinaryPrimitives.ReadInt64LittleEndian(rest[8..]);
        }
        else
        {
            r.ThreadId = BinaryPrimitives.ReadInt32LittleEndian(rest[8..]);
            r.ProcessId = BinaryPrimitives.ReadInt32LittleEndian(rest[12..]);
            r.RawTimestamp = BinaryPrimitives.ReadInt64LittleEndian(rest[16..]);
        }

        r.PayloadOffset = payloadAt;
        r.PayloadLength = size - payloadAt;
        return EtlParseResult.Event;
    }

    private static EtlParseResult Classic(ReadOnlySpan<byte> rest, EtlHeaderKind kind, int fixedSize, int pointerSize,
        ref EtlEventRecord r)
    {
        if (SizeFirst(rest, kind, fixedSize, pointerSize, ref r) != EtlParseResult.Event) return EtlParseResult.Damaged;
        r.Opcode = rest[4];
        r.Version = rest[6];
        r.ThreadId = BinaryPrimitives.ReadInt32LittleEndian(rest[8..]);
        r.ProcessId = BinaryPrimitives.ReadInt32LittleEndian(rest[12..]);
        r.RawTimestamp = BinaryPrimitives.ReadInt64LittleEndian(rest[16..]);
        r.Guid = new Guid(rest.Slice(0x18, 16));
        return EtlParseResult.Event;
    }

    private static EtlParseResult WithEventHeader(ReadOnlySpan<byte> rest, int pointerSize, ref EtlEventRecord r)
    {
        if (SizeFirst(rest, EtlHeaderKind.EventHeader, EventHeaderSize, pointerSize, ref r) != EtlParseResult.Event)
            return EtlParseResult.Damaged;
        var size = r.PayloadOffset + r.PayloadLength;
        r.ThreadId = BinaryPrimitives.ReadInt32LittleEndian(rest[8..]);
        r.ProcessId = BinaryPrimitives.ReadInt32LittleEndian(rest[12..]);
        r.RawTimestamp = BinaryPrimitives.ReadInt64LittleEndian(rest[16..]);
        r.Guid = new Guid(rest.Slice(0x18, 16));
        r.EventId = BinaryPrimitives.ReadUInt16LittleEndian(rest[0x28..]);
        r.Version = rest[0x2A];
        r.Opcode = rest[0x2D];
        if ((BinaryPrimitives.ReadUInt16LittleEndian(rest[4..]) & ExtendedInfoFlag) == 0) return EtlParseResult.Event;

        // Extended data items run back to back while their linkage bit is set; the user data follows the last one.
        var at = EventHeaderSize;
        while (true)
        {
            if (size - at < ExtendedItemHeaderSize) return EtlParseResult.Damaged;
            int itemSize = BinaryPrimitives.ReadUInt16LittleEndian(rest[at..]);
            var linkage = BinaryPrimitives.ReadUInt16LittleEndian(rest[(at + 4)..]);
            if (itemSize < ExtendedItemHeaderSize || itemSize > size - at) return EtlParseResult.Damaged;
            at += itemSize;
            if ((linkage & 1) == 0) break;
        }

        r.PayloadOffset = at;
        r.PayloadLength = size - at;
        return EtlParseResult.Event;
    }

    /// <summary>The common part of the size-first headers: the size is the marker's low 16 bits.</summary>
    private static EtlParseResult SizeFirst(ReadOnlySpan<byte> rest, EtlHeaderKind kind, int fixedSize, int pointerSize,
        ref EtlEventRecord r)
    {
        int size = BinaryPrimitives.ReadUInt16LittleEndian(rest);
        if (size < fixedSize || size > rest.Length) return EtlParseResult.Damaged;
        r.Kind = kind;
        r.PointerSize = pointerSize;
        r.Stride = Align8(size);
        r.Hook = 0;
        r.Guid = default;
        r.Opcode = 0;
        r.Version = 0;
        r.EventId = 0;
        r.ThreadId = -1;
        r.ProcessId = -1;
        r.RawTimestamp = 0;
        r.PayloadOffset = fixedSize;
        r.PayloadLength = size - fixedSize;
        return EtlParseResult.Event;
    }

    private static int Align8(int size) => (size + 7) & ~7;
}
