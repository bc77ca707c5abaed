using System.Globalization;

namespace TraceLab.Formats.Symbols;

/// <summary>
/// Kernel symbols from a kallsyms text ("address type name [module]" per line), sorted; each function reaches to
/// the next symbol, as perf takes them.
/// </summary>
public sealed class Kallsyms
{
    private readonly ulong[] _starts;
    private readonly string[] _names;

    private Kallsyms(ulong[] starts, string[] names)
    {
        _starts = starts;
        _names = names;
    }

    /// <summary>Symbols read.</summary>
    public int Count => _starts.Length;

    /// <summary>
    /// Parses kallsyms text; lines that do not parse, and zero addresses (hidden without root), are skipped.
    /// </summary>
    public static Kallsyms Parse(TextReader text)
    {
        var list = new List<(ulong, string)>();
        while (text.ReadLine() is { } line)
        {
            var parts = line.Split(' ', 4, StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length < 3 || parts[1].Length != 1 || "tTwW".IndexOf(parts[1][0], StringComparison.Ordinal) < 0)
                continue;
            if (!ulong.TryParse(parts[0], NumberStyles.HexNumber, CultureInfo.InvariantCulture, out var a) || a == 0)
                continue;
            list.Add((a, parts[2]));
        }

        list.Sort((x, y) => x.Item1.CompareTo(y.Item1));
        return new Kallsyms(list.Select(x => x.Item1).ToArray(), list.Select(x => x.Item2).ToArray());
    }

    /// <summary>
    /// The symbol at or below <paramref name="address"/> and the offset into it; null below the first.
    /// </summary>
    public (string Name, ulong Offset)? Find(ulong address)
    {
        var i = Array.BinarySearch(_starts, address);
        if (i < 0) i = ~i - 1;
        return i < 0 ? null : (_names[i], address - _starts[i]);
    }
}
