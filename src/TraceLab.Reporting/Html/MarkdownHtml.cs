using System.Buffers;
using System.Globalization;
using System.Net;
using System.Text.RegularExpressions;

namespace TraceLab.Reporting.Html;

/// <summary>
/// Turns report.md (the subset <see cref="ReportMarkdown"/> writes: headings, bullet lists, pipe tables, paragraphs,
/// `code`) into HTML, so that report.html shows exactly report.md's numbers without a second renderer of each section.
/// </summary>
public static partial class MarkdownHtml
{
    public static string Convert(string markdown)
    {
        using var html = new StringWriter(CultureInfo.CurrentCulture);
        Write(html, markdown, 0, markdown.Length);
        return html.ToString();
    }

    /// <summary>
    /// Writes the HTML of <paramref name="markdown"/>[<paramref name="start"/>..<paramref name="end"/>) as it goes,
    /// straight from the text: no string per line or cell (report.md of a whole system: 100,000 rows; a busy
    /// system's page made ~9 MB of them, pushing the run past its heap without collections), only where a piece
    /// has characters to escape or is a heading's anchor.
    /// </summary>
    public static void Write(TextWriter html, string markdown, int start, int end)
    {
        var lines = new Lines(markdown, start, end);
        var i = 0;
        while (i < lines.Count)
        {
            var line = lines.Span(i);
            // The collapsed lists report.md folds long tables into: the same <details> in HTML.
            if (line is "<details>" or "</details>")
            {
                html.Write(line);
                html.Write('\n');
                i++;
                continue;
            }
            if (line.StartsWith("<summary>", StringComparison.Ordinal)
                && line.EndsWith("</summary>", StringComparison.Ordinal))
            {
                html.Write("<summary>");
                Inline(html, line["<summary>".Length..^"</summary>".Length]);
                html.Write("</summary>\n");
                i++;
                continue;
            }
            if (IsTableRow(line))
            {
                var first = i;
                while (i < lines.Count && IsTableRow(lines.Span(i))) i++;
                Table(html, lines, first, i);
                continue;
            }
            if (IsListItem(line))
            {
                html.Write("<ul>\n");
                while (i < lines.Count && IsListItem(lines.Span(i)))
                {
                    html.Write("<li>");
                    Inline(html, lines.Span(i++)[2..]);
                    html.Write("</li>\n");
                }
                html.Write("</ul>\n");
                continue;
            }
            var level = line.Length - line.TrimStart('#').Length;
            if (level is > 0 and <= 6 && line.Length > level && line[level] == ' ')
            {
                var text = line[(level + 1)..];
                html.Write($"<h{level} id=\"{Slug(text.ToString())}\">");
                Inline(html, text);
                html.Write($"</h{level}>\n");
            }
            else if (line.Length > 0)
            {
                html.Write("<p>");
                Inline(html, line);
                html.Write("</p>\n");
            }
            i++;
        }
    }

    private static bool IsTableRow(ReadOnlySpan<char> line) => line.Length > 0 && line[0] == '|';

    private static bool IsListItem(ReadOnlySpan<char> line) => line.StartsWith("- ", StringComparison.Ordinal);

    /// <summary>
    /// The lines of a range of a text, as <c>Split('\n')</c> after <c>Replace("\r\n", "\n")</c> would give them,
    /// each seen in place.
    /// </summary>
    private sealed class Lines
    {
        private readonly string _text;
        /// <summary>Where each line starts; one more entry, past the last line's end.</summary>
        private readonly List<int> _starts = [];

        public Lines(string text, int start, int end)
        {
            _text = text;
            _starts.Add(start);
            for (var n = text.IndexOf('\n', start, end - start); n >= 0; n = text.IndexOf('\n', n + 1, end - n - 1))
                _starts.Add(n + 1);
            _starts.Add(end + 1);
        }

        public int Count => _starts.Count - 1;

        public ReadOnlySpan<char> Span(int i)
        {
            var from = _starts[i];
            var to = _starts[i + 1] - 1;
            if (i < Count - 1 && to > from && _text[to - 1] == '\r') to--;
            return _text.AsSpan(from, to - from);
        }
    }

    private static void Table(TextWriter html, Lines lines, int first, int end)
    {
        var header = Cells(lines.Span(first).ToString());
        var ruled = end - first > 1 && lines.Span(first + 1).Contains("---", StringComparison.Ordinal);
        var aligns = ruled
            ? Cells(lines.Span(first + 1).ToString()).Select(c => c.EndsWith(':') ? "num" : "").ToArray()
            : new string[header.Length];
        html.Write("<div class=\"table-wrap\"><table>\n<thead><tr>");
        for (var c = 0; c < header.Length; c++) Cell(html, "th", header[c], Align(aligns, c));
        html.Write("</tr></thead>\n<tbody>\n");
        for (var r = first + (aligns.Length > 0 && ruled ? 2 : 1); r < end; r++)
        {
            html.Write("<tr>");
            var cells = new CellReader(lines.Span(r));
            for (var c = 0; cells.Next(out var cell); c++) Cell(html, "td", cell, Align(aligns, c));
            html.Write("</tr>\n");
        }
        html.Write("</tbody></table></div>\n");
    }

    private static string? Align(string[] aligns, int c) => c < aligns.Length ? aligns[c] : null;

    private static void Cell(TextWriter html, string tag, ReadOnlySpan<char> text, string? cls)
    {
        html.Write('<');
        html.Write(tag);
        if (!string.IsNullOrEmpty(cls))
        {
            html.Write(" class=\"");
            html.Write(cls);
            html.Write('"');
        }
        html.Write('>');
        Inline(html, text);
        html.Write("</");
        html.Write(tag);
        html.Write('>');
    }

    /// <summary>The cells of "| a | b |": the text between the outer pipes, split on the inner ones, trimmed.</summary>
    public static string[] Cells(string row)
    {
        var cells = new List<string>();
        var reader = new CellReader(row);
        while (reader.Next(out var cell)) cells.Add(cell.ToString());
        return [.. cells];
    }

    /// <summary>A table row's cells in place, as <see cref="Cells"/> gives them.</summary>
    private ref struct CellReader
    {
        private ReadOnlySpan<char> _rest;
        private bool _done;

        public CellReader(ReadOnlySpan<char> row)
        {
            var inner = row.Trim();
            if (inner.Length > 0 && inner[0] == '|') inner = inner[1..];
            if (inner.Length > 0 && inner[^1] == '|') inner = inner[..^1];
            _rest = inner;
        }

        public bool Next(out ReadOnlySpan<char> cell)
        {
            cell = default;
            if (_done) return false;
            var bar = _rest.IndexOf('|');
            if (bar < 0)
            {
                cell = _rest.Trim();
                _done = true;
                return true;
            }
            cell = _rest[..bar].Trim();
            _rest = _rest[(bar + 1)..];
            return true;
        }
    }

    /// <summary>
    /// The text HTML-escaped, each `code` span (a backtick, then up to the next one) in &lt;code&gt;. Escaping goes
    /// character by character and never touches a backtick, so escaping the pieces between backticks gives what
    /// escaping the whole and then replacing the spans gives.
    /// </summary>
    private static void Inline(TextWriter html, ReadOnlySpan<char> text)
    {
        while (true)
        {
            var open = text.IndexOf('`');
            if (open < 0) break;
            var length = text[(open + 1)..].IndexOf('`');
            if (length < 0) break;
            Escaped(html, text[..open]);
            html.Write("<code>");
            Escaped(html, text.Slice(open + 1, length));
            html.Write("</code>");
            text = text[(open + length + 2)..];
        }
        Escaped(html, text);
    }

    /// <summary><see cref="WebUtility.HtmlEncode(string)"/> of the text: as it is where nothing needs escaping.
    /// </summary>
    private static void Escaped(TextWriter html, ReadOnlySpan<char> text)
    {
        if (text.IndexOfAnyExcept(Unescaped) < 0) html.Write(text);
        else html.Write(WebUtility.HtmlEncode(text.ToString()));
    }

    /// <summary>
    /// Characters WebUtility.HtmlEncode never changes, as it checks them: below U+00A0, except &lt; &gt; " ' &amp;
    /// (it leaves more alone: those go the long way, with the same result).
    /// </summary>
    private static readonly SearchValues<char> Unescaped = SearchValues.Create(
        Enumerable.Range(0, 0xa0).Select(c => (char)c)
            .Where(c => c is not ('<' or '>' or '"' or '\'' or '&')).ToArray());

    public static string Slug(string text) =>
        NonWord().Replace(text.ToLowerInvariant(), "-").Trim('-');

    [GeneratedRegex("[^a-z0-9]+")]
    private static partial Regex NonWord();
}
