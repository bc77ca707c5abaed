using System.Buffers.Binary;

namespace TraceLab.Charts;

/// <summary>
/// Rewrites a plain TrueType/OpenType font file (one sfnt, not a collection, not WOFF) with its <c>cmap</c> table
/// replaced and every other table byte for byte the same: the table directory's offsets, lengths and checksums, the
/// 4-byte padding and the <c>head</c> table's whole-file checksum adjustment are recomputed. Every read is
/// bounds-checked; a file it does not understand gives null, never an exception.
/// </summary>
public static class SfntCmapReplacer
{
    private const int HeaderSize = 12, RecordSize = 16, MaxTables = 1024;
    private const uint TrueTypeVersion = 0x00010000, Cff = 0x4F54544F /* OTTO */, AppleTrue = 0x74727565 /* true */;
    private const uint CmapTag = 0x636D6170, HeadTag = 0x68656164;
    private const int HeadChecksumAdjustment = 8;

    /// <summary>The font with <paramref name="cmap"/> as its <c>cmap</c> table; null if <paramref name="font"/> is
    /// not a well-formed single sfnt with a <c>cmap</c> and a <c>head</c> table. The array is pinned (never moved by
    /// the collector), so that the drawing library can load the font from it where it lies.</summary>
    public static byte[]? Replace(ReadOnlySpan<byte> font, ReadOnlySpan<byte> cmap)
    {
        if (font.Length < HeaderSize) return null;
        var version = BinaryPrimitives.ReadUInt32BigEndian(font);
        if (version is not (TrueTypeVersion or Cff or AppleTrue)) return null;
        int count = BinaryPrimitives.ReadUInt16BigEndian(font[4..]);
        if (count is 0 or > MaxTables || HeaderSize + (long)count * RecordSize > font.Length) return null;

        var tags = new uint[count];
        var tables = new (int Offset, int Length)[count];
        bool hasCmap = false, hasHead = false;
        for (var i = 0; i < count; i++)
        {
            var record = font.Slice(HeaderSize + i * RecordSize, RecordSize);
            tags[i] = BinaryPrimitives.ReadUInt32BigEndian(record);
            var offset = BinaryPrimitives.ReadUInt32BigEndian(record[8..]);
            var length = BinaryPrimitives.ReadUInt32BigEndian(record[12..]);
            if (offset > (uint)font.Length || length > (uint)font.Length - offset) return null;
            if (Array.IndexOf(tags, tags[i], 0, i) >= 0) return null;
            tables[i] = ((int)offset, (int)length);
            hasCmap |= tags[i] == CmapTag;
            hasHead |= tags[i] == HeadTag && length >= HeadChecksumAdjustment + 4;
        }
        if (!hasCmap || !hasHead) return null;

        var directory = HeaderSize + count * RecordSize;
        long size = directory;
        for (var i = 0; i < count; i++) size += Padded(tags[i] == CmapTag ? cmap.Length : tables[i].Length);
        if (size > int.MaxValue) return null;

        var output = GC.AllocateArray<byte>((int)size, pinned: true);
        font[..HeaderSize].CopyTo(output);
        var at = directory;
        var headAt = -1;
        for (var i = 0; i < count; i++)
        {
            var data = tags[i] == CmapTag ? cmap : font.Slice(tables[i].Offset, tables[i].Length);
            data.CopyTo(output.AsSpan(at));
            if (tags[i] == HeadTag)
            {
                headAt = at;
                // The checksums are taken with the adjustment at 0 (OpenType "head"); it is filled in at the end.
                BinaryPrimitives.WriteUInt32BigEndian(output.AsSpan(at + HeadChecksumAdjustment), 0);
            }
            var record = output.AsSpan(HeaderSize + i * RecordSize, RecordSize);
            BinaryPrimitives.WriteUInt32BigEndian(record, tags[i]);
            BinaryPrimitives.WriteUInt32BigEndian(record[4..], Checksum(output.AsSpan(at, Padded(data.Length))));
            BinaryPrimitives.WriteUInt32BigEndian(record[8..], (uint)at);
            BinaryPrimitives.WriteUInt32BigEndian(record[12..], (uint)data.Length);
            at += Padded(data.Length);
        }
        BinaryPrimitives.WriteUInt32BigEndian(output.AsSpan(headAt + HeadChecksumAdjustment),
            unchecked(0xB1B0AFBA - Checksum(output)));
        return output;
    }

    private static int Padded(int length) => (length + 3) & ~3;

    /// <summary>The sum of the big-endian 32-bit words (a short last word padded with zeros).</summary>
    private static uint Checksum(ReadOnlySpan<byte> data)
    {
        uint sum = 0;
        var i = 0;
        for (; i + 4 <= data.Length; i += 4) sum = unchecked(sum + BinaryPrimitives.ReadUInt32BigEndian(data[i..]));
        if (i < data.Length)
        {
            Span<byte> last = stackalloc byte[4];
            last.Clear();
            data[i..].CopyTo(last);
            sum = unchecked(sum + BinaryPrimitives.ReadUInt32BigEndian(last));
        }
        return sum;
    }
}
