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
    /// Writes the HTML of <paramref name="markdown"/>[<paramref name="start"/>..<paramref name="end"/>) as it goes:
    /// one line's strings at a time, never the whole text split or converted in memory (report.md of a whole
    /// system: 100,000 rows).
    /// </summary>
    public static void Write(TextWriter html, string markdown, int start, int end)
    {
        var lines = new Lines(markdown, start, end);
        var i = 0;
        while (i < lines.Count)
        {
            var line = lines[i];
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
                html.Write(Inline(line["<summary>".Length..^"</summary>".Length]));
                html.Write("</summary>\n");
                i++;
                continue;
            }
            if (line.StartsWith('|'))
            {
                var first = i;
                while (i < lines.Count && lines[i].StartsWith('|')) i++;
                Table(html, lines, first, i);
                continue;
            }
            if (line.StartsWith("- ", StringComparison.Ordinal))
            {
                html.Write("<ul>\n");
                while (i < lines.Count && lines[i].StartsWith("- ", StringComparison.Ordinal))
                {
                    html.Write("<li>");
                    html.Write(Inline(lines[i++][2..]));
                    html.Write("</li>\n");
                }
                html.Write("</ul>\n");
                continue;
            }
            var level = line.TakeWhile(c => c == '#').Count();
            if (level is > 0 and <= 6 && line.Length > level && line[level] == ' ')
            {
                var text = line[(level + 1)..];
                html.Write($"<h{level} id=\"{Slug(text)}\">");
                html.Write(Inline(text));
                html.Write($"</h{level}>\n");
            }
            else if (line.Length > 0)
            {
                html.Write("<p>");
                html.Write(Inline(line));
                html.Write("</p>\n");
            }
            i++;
        }
    }

    /// <summary>
    /// The lines of a range of a text, as <c>Split('\n')</c> after <c>Replace("\r\n", "\n")</c> would give them,
    /// each made a string only when read.
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

        public string this[int i]
        {
            get
            {
                var from = _starts[i];
                var to = _starts[i + 1] - 1;
                if (i < Count - 1 && to > from && _text[to - 1] == '\r') to--;
                return _text[from..to];
            }
        }
    }

    private static void Table(TextWriter html, Lines lines, int first, int end)
    {
        var header = Cells(lines[first]);
        var ruled = end - first > 1 && lines[first + 1].Contains("---", StringComparison.Ordinal);
        var aligns = ruled
            ? Cells(lines[first + 1]).Select(c => c.EndsWith(':') ? "num" : "").ToArray()
            : new string[header.Length];
        html.Write("<div class=\"table-wrap\"><table>\n<thead><tr>");
        for (var c = 0; c < header.Length; c++) html.Write(Cell("th", header[c], Align(aligns, c)));
        html.Write("</tr></thead>\n<tbody>\n");
        for (var r = first + (aligns.Length > 0 && ruled ? 2 : 1); r < end; r++)
        {
            html.Write("<tr>");
            var cells = Cells(lines[r]);
            for (var c = 0; c < cells.Length; c++) html.Write(Cell("td", cells[c], Align(aligns, c)));
            html.Write("</tr>\n");
        }
        html.Write("</tbody></table></div>\n");
    }

    private static string? Align(string[] aligns, int c) => c < aligns.Length ? aligns[c] : null;

    private static string Cell(string tag, string text, string? cls) =>
        string.IsNullOrEmpty(cls) ? $"<{tag}>{Inline(text)}</{tag}>" : $"<{tag} class=\"{cls}\">{Inline(text)}</{tag}>";

    /// <summary>The cells of "| a | b |": the text between the outer pipes, split on the inner ones, trimmed.</summary>
    public static string[] Cells(string row)
    {
        var inner = row.Trim();
        if (inner.StartsWith('|')) inner = inner[1..];
        if (inner.EndsWith('|')) inner = inner[..^1];
        return inner.Split('|').Select(c => c.Trim()).ToArray();
    }

    private static string Inline(string text) =>
        CodeSpan().Replace(WebUtility.HtmlEncode(text), m => $"<code>{m.Groups[1].Value}</code>");

    public static string Slug(string text) =>
        NonWord().Replace(text.ToLowerInvariant(), "-").Trim('-');

    [GeneratedRegex("`([^`]*)`")]
    private static partial Regex CodeSpan();

    [GeneratedRegex("[^a-z0-9]+")]
    private static partial Regex NonWord();
}
