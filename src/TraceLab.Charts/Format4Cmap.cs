using System.Buffers.Binary;

namespace TraceLab.Charts;

/// <summary>
/// Builds a <c>cmap</c> table with a single subtable, format 4, for Windows Unicode BMP (platform 3, encoding 1) —
/// the one FreeType selects when the font has no 32-bit Unicode map.
/// </summary>
public static class Format4Cmap
{
    private const int TableHeader = 4, EncodingRecord = 8, SubtableHeader = 14;

    /// <summary>The table mapping each character to its glyph; <paramref name="map"/> is sorted by character, each
    /// character once, all below U+FFFF.</summary>
    public static byte[] Build(IReadOnlyList<(ushort Char, ushort Glyph)> map)
    {
        // Runs of consecutive characters on consecutive glyphs share one segment (idDelta, no glyph array).
        var segments = new List<(ushort Start, ushort End, ushort Delta)>();
        foreach (var (c, g) in map)
        {
            if (c == 0xFFFF) throw new ArgumentException("U+FFFF ends a format 4 map", nameof(map));
            var delta = unchecked((ushort)(g - c));
            if (segments.Count > 0 && segments[^1].End + 1 == c && segments[^1].Delta == delta)
                segments[^1] = (segments[^1].Start, c, delta);
            else segments.Add((c, c, delta));
        }
        segments.Add((0xFFFF, 0xFFFF, 1));

        var n = segments.Count;
        var length = SubtableHeader + 2 + n * 8;
        var table = new byte[TableHeader + EncodingRecord + length];
        var span = table.AsSpan();
        BinaryPrimitives.WriteUInt16BigEndian(span[2..], 1);
        BinaryPrimitives.WriteUInt16BigEndian(span[4..], 3);
        BinaryPrimitives.WriteUInt16BigEndian(span[6..], 1);
        BinaryPrimitives.WriteUInt32BigEndian(span[8..], TableHeader + EncodingRecord);
        var sub = span[(TableHeader + EncodingRecord)..];
        var searchRange = 2 * (1 << (int)Math.Log2(n));
        BinaryPrimitives.WriteUInt16BigEndian(sub, 4);
        BinaryPrimitives.WriteUInt16BigEndian(sub[2..], checked((ushort)length));
        BinaryPrimitives.WriteUInt16BigEndian(sub[6..], (ushort)(2 * n));
        BinaryPrimitives.WriteUInt16BigEndian(sub[8..], (ushort)searchRange);
        BinaryPrimitives.WriteUInt16BigEndian(sub[10..], (ushort)Math.Log2(searchRange / 2));
        BinaryPrimitives.WriteUInt16BigEndian(sub[12..], (ushort)(2 * n - searchRange));
        var ends = sub[SubtableHeader..];
        var starts = ends[(2 * n + 2)..];
        var deltas = starts[(2 * n)..];
        for (var i = 0; i < n; i++)
        {
            BinaryPrimitives.WriteUInt16BigEndian(ends[(2 * i)..], segments[i].End);
            BinaryPrimitives.WriteUInt16BigEndian(starts[(2 * i)..], segments[i].Start);
            BinaryPrimitives.WriteUInt16BigEndian(deltas[(2 * i)..], segments[i].Delta);
        }
        return table;
    }
}
