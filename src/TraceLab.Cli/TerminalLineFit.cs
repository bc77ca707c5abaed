using System.Text;

namespace TraceLab.Cli;

/// <summary>
/// Fits one line of Spectre markup into the terminal's columns: wrapped at spaces into lines of at most
/// <see cref="Width"/> visible characters (continuations indented), at most <see cref="MaxLines"/> of them; a longer
/// text ends with <see cref="Trimmed"/> (report.md and report.json keep it whole). Markup tags count no width and
/// are closed at each line's end and opened again on the next, so every line is valid markup on its own.
/// </summary>
internal static class TerminalLineFit
{
    /// <summary>The widest line TraceLab writes to the terminal (docs/performance.md, busy systems).</summary>
    public const int Width = 160;

    /// <summary>Lines one finding's line may take on the terminal.</summary>
    public const int MaxLines = 3;

    public const string Indent = "     ";

    /// <summary>What ends a text cut short; the whole text is in the report files.</summary>
    public const string Trimmed = " … (report.md)";

    /// <summary>A tag (no width) or one visible character with its markup spelling ("[[" for '[').</summary>
    private readonly record struct Atom(string Markup, bool IsTag, bool IsSpace);

    public static IReadOnlyList<string> Fit(string markup, int width = Width, int maxLines = MaxLines)
    {
        // Narrower, a continuation line would have no room after its indent and the cut marker.
        ArgumentOutOfRangeException.ThrowIfLessThan(width, Indent.Length + Trimmed.Length + 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxLines, 1);
        var atoms = Parse(markup);
        // Visible characters from each atom to the end: whether the rest fits on the last line allowed.
        var rest = new int[atoms.Count + 1];
        for (var k = atoms.Count - 1; k >= 0; k--) rest[k] = rest[k + 1] + (atoms[k].IsTag ? 0 : 1);

        var lines = new List<string>();
        var open = new List<string>();
        var line = new StringBuilder();
        var used = 0;
        var i = 0;
        while (i < atoms.Count)
        {
            var last = lines.Count == maxLines - 1;
            var room = last && used + rest[i] > width ? width - Trimmed.Length : width;
            var end = WordEnd(atoms, i);
            var wordWidth = VisibleWidth(atoms, i, end);
            if (used + wordWidth <= room || used <= Indent.Length && lines.Count > 0 || used == 0)
            {
                // Fits, or a word longer than a whole line: cut at the room left.
                for (; i < end && (used < room || atoms[i].IsTag); i++) Append(atoms[i], line, open, ref used);
                if (i < end && !last) Break(lines, line, open, ref used);
                else if (i < end) return Finish(lines, line, open, trimmed: true);
                continue;
            }

            if (last) return Finish(lines, line, open, trimmed: true);
            Break(lines, line, open, ref used);
            while (i < atoms.Count && atoms[i].IsSpace) i++;
        }

        return Finish(lines, line, open, trimmed: false);
    }

    /// <summary>The end of the word (or the run of spaces) that starts at <paramref name="start"/>.</summary>
    private static int WordEnd(List<Atom> atoms, int start)
    {
        var space = atoms[start].IsSpace;
        var i = start;
        while (i < atoms.Count && (atoms[i].IsTag || atoms[i].IsSpace == space)) i++;
        return i;
    }

    private static int VisibleWidth(List<Atom> atoms, int from, int to)
    {
        var n = 0;
        for (var i = from; i < to; i++) n += atoms[i].IsTag ? 0 : 1;
        return n;
    }

    private static void Append(Atom atom, StringBuilder line, List<string> open, ref int used)
    {
        line.Append(atom.Markup);
        if (!atom.IsTag) used++;
        else if (atom.Markup == "[/]") { if (open.Count > 0) open.RemoveAt(open.Count - 1); }
        else open.Add(atom.Markup);
    }

    private static void Break(List<string> lines, StringBuilder line, List<string> open, ref int used)
    {
        lines.Add(Close(line.ToString().TrimEnd(), open));
        line.Clear().Append(Indent);
        foreach (var tag in open) line.Append(tag);
        used = Indent.Length;
    }

    private static List<string> Finish(List<string> lines, StringBuilder line, List<string> open, bool trimmed)
    {
        var text = line.ToString().TrimEnd();
        if (trimmed) text += Trimmed.Replace("[", "[[", StringComparison.Ordinal);
        lines.Add(Close(text, open));
        return lines;
    }

    private static string Close(string text, List<string> open) =>
        text + string.Concat(Enumerable.Repeat("[/]", open.Count));

    /// <summary>Splits markup into tags and visible characters ("[[" and "]]" are one character each).</summary>
    private static List<Atom> Parse(string markup)
    {
        var atoms = new List<Atom>(markup.Length);
        for (var i = 0; i < markup.Length; i++)
        {
            var c = markup[i];
            if ((c == '[' || c == ']') && i + 1 < markup.Length && markup[i + 1] == c)
            {
                atoms.Add(new Atom(new string(c, 2), IsTag: false, IsSpace: false));
                i++;
            }
            else if (c == '[' && markup.IndexOf(']', i) is var close and > 0)
            {
                atoms.Add(new Atom(markup[i..(close + 1)], IsTag: true, IsSpace: false));
                i = close;
            }
            else
            {
                atoms.Add(new Atom(c.ToString(), IsTag: false, IsSpace: c == ' '));
            }
        }

        return atoms;
    }
}
