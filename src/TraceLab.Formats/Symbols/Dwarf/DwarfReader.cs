using System.Buffers.Binary;
using System.Text;

namespace TraceLab.Formats.Symbols.Dwarf;

/// <summary>A DWARF unit, CFA program or entry that runs past its end or holds an impossible value.</summary>
internal sealed class DwarfException() : Exception("damaged DWARF");

/// <summary>
/// Little-endian reads of DWARF data (.debug_line units, .eh_frame entries, expressions) bounded by the entry's end;
/// past it, <see cref="DwarfException"/>.
/// </summary>
internal ref struct DwarfReader(ReadOnlySpan<byte> data, int position, int end)
{
    private readonly ReadOnlySpan<byte> _data = data;
    private readonly int _end = end;

    public int Position { get; private set; } = position;

    /// <summary>
    /// The unit at <paramref name="at"/> of a .debug_line or .debug_info section: a reader from after its initial
    /// length to its <paramref name="end"/>, and its offsets' size (4, or 8 in the 64-bit format).
    /// </summary>
    public static DwarfReader Unit(ReadOnlySpan<byte> data, int at, out int offsetSize, out int end)
    {
        var r = new DwarfReader(data, at, data.Length);
        var length = (ulong)r.U32();
        offsetSize = 4;
        if (length == 0xffffffff)
        {
            length = r.U64();
            offsetSize = 8;
        }

        if (length > (ulong)(data.Length - r.Position)) throw new DwarfException();
        end = r.Position + (int)length;
        return new DwarfReader(data, r.Position, end);
    }

    private ReadOnlySpan<byte> Take(int n)
    {
        if (n < 0 || Position > _end - n) throw new DwarfException();
        var s = _data.Slice(Position, n);
        Position += n;
        return s;
    }

    public void Skip(long n)
    {
        if (n < 0 || n > _end - Position) throw new DwarfException();
        Position += (int)n;
    }

    public void Seek(long to)
    {
        if (to < Position || to > _end) throw new DwarfException();
        Position = (int)to;
    }

    public byte U8() => Take(1)[0];
    public ushort U16() => BinaryPrimitives.ReadUInt16LittleEndian(Take(2));
    public uint U32() => BinaryPrimitives.ReadUInt32LittleEndian(Take(4));
    public ulong U64() => BinaryPrimitives.ReadUInt64LittleEndian(Take(8));

    public string CString()
    {
        var rest = _data[Position.._end];
        var nul = rest.IndexOf((byte)0);
        if (nul < 0) throw new DwarfException();
        Position += nul + 1;
        return Encoding.UTF8.GetString(rest[..nul]);
    }

    /// <summary>Moves past a NUL-terminated string without decoding it.</summary>
    public void SkipCString()
    {
        var nul = _data[Position.._end].IndexOf((byte)0);
        if (nul < 0) throw new DwarfException();
        Position += nul + 1;
    }

    public ulong Uleb()
    {
        ulong value = 0;
        for (var shift = 0; ; shift += 7)
        {
            var b = U8();
            if (shift < 64) value |= (ulong)(b & 0x7f) << shift;
            if ((b & 0x80) == 0) return value;
            if (shift > 70) throw new DwarfException();
        }
    }

    public long Sleb()
    {
        long value = 0;
        var shift = 0;
        byte b;
        do
        {
            b = U8();
            if (shift < 64) value |= (long)(b & 0x7f) << shift;
            shift += 7;
            if (shift > 77) throw new DwarfException();
        } while ((b & 0x80) != 0);

        if (shift < 64 && (b & 0x40) != 0) value |= -1L << shift;
        return value;
    }

    /// <summary>
    /// A pointer in DW_EH_PE encoding <paramref name="encoding"/> (.eh_frame); pc-relative ones relative to this
    /// field's link-time address (<paramref name="sectionAddress"/> + position).
    /// </summary>
    public ulong Pointer(byte encoding, ulong sectionAddress)
    {
        if (encoding == 0xff) return 0; // omit
        var at = sectionAddress + (ulong)Position;
        ulong value = (encoding & 0x0f) switch
        {
            0x00 => U64(),
            0x01 => Uleb(),
            0x02 => U16(),
            0x03 => U32(),
            0x04 => U64(),
            0x09 => (ulong)Sleb(),
            0x0a => (ulong)(long)(short)U16(),
            0x0b => (ulong)(long)(int)U32(),
            0x0c => U64(),
            _ => throw new DwarfException(),
        };
        return (encoding & 0x70) switch
        {
            0x00 => value,
            0x10 => at + value, // pcrel
            _ => throw new DwarfException(), // textrel, datarel, funcrel, aligned: not used in .eh_frame FDEs
        };
    }
}
