using System.Globalization;

namespace TraceLab.Formats.Ftrace;

/// <summary>
/// Parses the "field:DECL;\toffset:N;\tsize:N;\tsigned:N;" lines shared by event formats and header_page.
/// </summary>
internal static class FormatFieldLine
{
    // No record or page is larger than the 16 MiB page-size bound, so larger values can only come from corruption.
    private const int MaxOffsetOrSize = 1 << 24;

    public static bool TryParse(string line, bool isCommon, out FtraceField field)
    {
        field = null!;
        var text = line.AsSpan().Trim();
        if (!text.StartsWith("field:", StringComparison.Ordinal)) return false;
        text = text["field:".Length..];

        var semi = text.IndexOf(';');
        if (semi < 0) return false;
        var decl = text[..semi].Trim();
        var rest = text[(semi + 1)..];
        if (!TryGetAttribute(rest, "offset:", out var offset) || !TryGetAttribute(rest, "size:", out var size))
            return false;
        // A negative or huge position would index outside every record; such a line is not understood, like any other.
        if (offset is < 0 or > MaxOffsetOrSize || size is < 0 or > MaxOffsetOrSize) return false;
        var signed = TryGetAttribute(rest, "signed:", out var s) && s != 0;

        var nameStart = decl.LastIndexOfAny(' ', '\t') + 1;
        if (nameStart <= 0) return false;
        var nameToken = decl[nameStart..];
        var typeText = decl[..nameStart].Trim();
        var arrayLength = -1;
        var bracket = nameToken.IndexOf('[');
        if (bracket >= 0)
        {
            var close = nameToken.IndexOf(']');
            if (close < bracket) return false;
            var inside = nameToken[(bracket + 1)..close];
            arrayLength = inside.IsEmpty ? 0
                : int.TryParse(inside, NumberStyles.Integer, CultureInfo.InvariantCulture, out var n) ? n : 0;
            typeText = $"{typeText.ToString()}{nameToken[bracket..].ToString()}".AsSpan();
            nameToken = nameToken[..bracket];
        }

        var isDataLoc = typeText.StartsWith("__data_loc", StringComparison.Ordinal);
        var isRelLoc = typeText.StartsWith("__rel_loc", StringComparison.Ordinal);
        field = new FtraceField(nameToken.ToString(), typeText.ToString(), offset, size, signed, arrayLength,
            isDataLoc || isRelLoc, isRelLoc, isCommon);
        return true;
    }

    private static bool TryGetAttribute(ReadOnlySpan<char> rest, string key, out int value)
    {
        value = 0;
        var at = rest.IndexOf(key, StringComparison.Ordinal);
        if (at < 0) return false;
        var v = rest[(at + key.Length)..];
        var end = v.IndexOf(';');
        if (end >= 0) v = v[..end];
        return int.TryParse(v.Trim(), NumberStyles.Integer, CultureInfo.InvariantCulture, out value);
    }
}
