using System.Collections.Frozen;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using SkiaSharp;

namespace TraceLab.Charts;

/// <summary>
/// A typeface built from another's font file with a character map that maps only the characters charts use (ASCII,
/// Latin-1 and a few symbols): the same glyphs, advances, kerning, hinting and names, so text drawn with it gives the
/// same pixels and the same SVG as with the original. Why: for every text run, the SVG canvas maps glyphs back to
/// characters by walking the typeface's whole character map (DejaVu Sans: about 5,900 characters), a fifth of the
/// CPU of drawing a busy report's charts; this map has about 210 (docs/performance.md, "svg-text").
/// </summary>
public sealed class ReducedCmapTypeface
{
    private readonly FrozenSet<char> mapped;

    private ReducedCmapTypeface(SKTypeface typeface, FrozenSet<char> mapped)
    {
        Typeface = typeface;
        this.mapped = mapped;
    }

    public SKTypeface Typeface { get; }

    /// <summary>The characters the reduced map keeps: what chart texts are made of, in any culture's numbers.</summary>
    public static IReadOnlyList<char> Wanted { get; } =
    [
        .. Enumerable.Range(0x20, 0x7F - 0x20).Select(c => (char)c),
        .. Enumerable.Range(0xA0, 0x100 - 0xA0).Select(c => (char)c),
        '\u2009', '\u2013', '\u2014', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2026', '\u202F',
        '\u2192', '\u2212', '\u221E', '\u2248', '\u2264', '\u2265',
    ];

    /// <summary>True when every character of <paramref name="text"/> that is drawn (all but the line breaks the
    /// drawing library splits lines at) is in the reduced map, so drawing the text with this typeface is drawing it
    /// with the original.</summary>
    public bool Draws(string text)
    {
        foreach (var c in text)
            if (c != '\n' && !mapped.Contains(c)) return false;
        return true;
    }

    /// <summary>The reduced typeface of <paramref name="original"/>, or null when its font is not a plain sfnt file,
    /// cannot be rewritten, or the result does not load as the same typeface with the same glyphs.</summary>
    public static ReducedCmapTypeface? Create(SKTypeface original)
    {
        try
        {
            using var stream = original.OpenStream(out var ttcIndex);
            if (stream is null || ttcIndex != 0) return null;
            var map = CharacterMap(original);
            if (map.Count == 0) return null;
            var font = Rewrite(stream, Format4Cmap.Build(map));
            if (font is null) return null;
            using var fontData = Share(font);
            var reduced = SKTypeface.FromData(fontData);
            if (reduced is null) return null;
            if (!SameFace(original, reduced, map))
            {
                reduced.Dispose();
                return null;
            }
            return new ReducedCmapTypeface(reduced, map.Select(m => (char)m.Char).ToFrozenSet());
        }
        catch (Exception ex) when (ex is not OutOfMemoryException)
        {
            // Whatever goes wrong, the charts are drawn with the original typeface, as before.
            return null;
        }
    }

    /// <summary>
    /// The font file of <paramref name="stream"/> with <paramref name="cmap"/> as its character map. Read where the
    /// drawing library holds it when it can (a font file it mapped): a copy is new memory, which is what costs on the
    /// machines we measure on (docs/performance.md#huge-page-heap).
    /// </summary>
    private static unsafe byte[]? Rewrite(SKStreamAsset stream, byte[] cmap)
    {
        var length = stream.Length;
        if (stream.GetMemoryBase() is var at && at != IntPtr.Zero && length > 0 && length <= int.MaxValue)
            return SfntCmapReplacer.Replace(new ReadOnlySpan<byte>((void*)at, length), cmap);
        using var data = SKData.Create(stream);
        return data is null ? null : SfntCmapReplacer.Replace(data.AsSpan(), cmap);
    }

    /// <summary>
    /// <paramref name="font"/> (pinned) handed to the drawing library without a copy: the array is kept alive until
    /// the library releases the data.
    /// </summary>
    private static unsafe SKData Share(byte[] font)
    {
        var keep = GCHandle.Alloc(font);
        var data = SKData.Create((IntPtr)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(font)), font.Length,
            (_, context) => ((GCHandle)context!).Free(), keep);
        if (data is null)
        {
            keep.Free();
            throw new InvalidOperationException("the drawing library took no font data");
        }
        return data;
    }

    /// <summary>
    /// The wanted characters the original maps, each with its glyph, plus, for each of those glyphs, the lowest
    /// character mapped to it: the canvas writes a glyph as the lowest character mapped to it, which must stay the
    /// same.
    /// </summary>
    private static List<(ushort Char, ushort Glyph)> CharacterMap(SKTypeface original)
    {
        int highest = Wanted.Max();
        var codepoints = Enumerable.Range(0, highest + 1).ToArray();
        using var font = new SKFont(original);
        var glyphs = font.GetGlyphs(codepoints);
        var lowest = new Dictionary<ushort, int>();
        for (var c = highest; c >= 0; c--)
            if (glyphs[c] != 0) lowest[glyphs[c]] = c;
        var map = new SortedDictionary<ushort, ushort>();
        foreach (var c in Wanted)
        {
            var glyph = glyphs[c];
            if (glyph == 0) continue;
            map[c] = glyph;
            map[(ushort)lowest[glyph]] = glyph;
        }
        return [.. map.Select(kv => (kv.Key, kv.Value))];
    }

    private static bool SameFace(SKTypeface original, SKTypeface reduced, List<(ushort Char, ushort Glyph)> map)
    {
        using var font = new SKFont(reduced);
        return reduced.FamilyName == original.FamilyName && reduced.GlyphCount == original.GlyphCount
            && reduced.FontWeight == original.FontWeight && reduced.FontWidth == original.FontWidth
            && reduced.FontSlant == original.FontSlant
            && font.GetGlyphs(map.Select(m => (int)m.Char).ToArray()).SequenceEqual(map.Select(m => m.Glyph));
    }
}
