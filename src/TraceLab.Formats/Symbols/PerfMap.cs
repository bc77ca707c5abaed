using System.Globalization;

namespace TraceLab.Formats.Symbols;

/// <summary>
/// A JIT's symbol map, /tmp/perf-PID.map ("START SIZE name" in hex per line: .NET with DOTNET_PerfMapEnabled=1,
/// Java's perf-map-agent, node --perf-basic-prof). Lines that do not parse are skipped.
/// </summary>
public sealed class PerfMap
{
    private readonly ElfSymbol[] _symbols;

    private PerfMap(ElfSymbol[] symbols) => _symbols = symbols;

    /// <summary>Symbols read.</summary>
    public int Count => _symbols.Length;

    /// <summary>Parses a perf map.</summary>
    public static PerfMap Parse(TextReader text)
    {
        var list = new List<ElfSymbol>();
        while (text.ReadLine() is { } line)
        {
            var parts = line.Split(' ', 3);
            if (parts.Length == 3 && TryHex(parts[0], out var start) && TryHex(parts[1], out var size)
                && size > 0 && parts[2].Length > 0)
                list.Add(new ElfSymbol(start, size, parts[2]));
        }

        return new PerfMap(list.OrderBy(s => s.Start).ToArray());
    }

    /// <summary>
    /// A hex number with or without "0x", as perf reads it (strtoull base 16): .NET writes "0x7f94990b46e0 53 …",
    /// V8 and perf-map-agent "7f94990b46e0 53 …". NumberStyles.HexNumber alone refused every line of .NET's maps.
    /// </summary>
    private static bool TryHex(string text, out ulong value)
    {
        var digits = text.StartsWith("0x", StringComparison.OrdinalIgnoreCase) ? text.AsSpan(2) : text.AsSpan();
        return ulong.TryParse(digits, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out value);
    }

    /// <summary>The JIT symbol holding <paramref name="address"/>; null when none.</summary>
    public (string Name, ulong Offset)? Find(ulong address)
    {
        int lo = 0, hi = _symbols.Length - 1;
        while (lo <= hi)
        {
            var mid = (lo + hi) >>> 1;
            var s = _symbols[mid];
            if (address < s.Start) hi = mid - 1;
            else if (address - s.Start >= s.Size) lo = mid + 1;
            else return (s.Name, address - s.Start);
        }

        return null;
    }
}
