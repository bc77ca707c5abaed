using System.Net;
using System.Text;
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
        var sb = new StringBuilder();
        var lines = markdown.Replace("\r\n", "\n").Split('\n');
        var i = 0;
        while (i < lines.Length)
        {
            var line = lines[i];
            // The collapsed lists report.md folds long tables into: the same <details> in HTML.
            if (line is "<details>" or "</details>")
            {
                sb.Append(line).Append('\n');
                i++;
                continue;
            }
            if (line.StartsWith("<summary>", StringComparison.Ordinal) && line.EndsWith("</summary>", StringComparison.Ordinal))
            {
                sb.Append("<summary>").Append(Inline(line["<summary>".Length..^"</summary>".Length])).Append("</summary>\n");
                i++;
                continue;
            }
            if (line.StartsWith('|'))
            {
                var start = i;
                while (i < lines.Length && lines[i].StartsWith('|')) i++;
                Table(sb, lines[start..i]);
                continue;
            }
            if (line.StartsWith("- ", StringComparison.Ordinal))
            {
                sb.Append("<ul>\n");
                while (i < lines.Length && lines[i].StartsWith("- ", StringComparison.Ordinal))
                    sb.Append("<li>").Append(Inline(lines[i++][2..])).Append("</li>\n");
                sb.Append("</ul>\n");
                continue;
            }
            var level = line.TakeWhile(c => c == '#').Count();
            if (level is > 0 and <= 6 && line.Length > level && line[level] == ' ')
            {
                var text = line[(level + 1)..];
                sb.Append($"<h{level} id=\"{Slug(text)}\">").Append(Inline(text)).Append($"</h{level}>\n");
            }
            else if (line.Length > 0) sb.Append("<p>").Append(Inline(line)).Append("</p>\n");
            i++;
        }
        return sb.ToString();
    }

    private static void Table(StringBuilder sb, string[] rows)
    {
        var header = Cells(rows[0]);
        var aligns = rows.Length > 1 && rows[1].Contains("---", StringComparison.Ordinal)
            ? Cells(rows[1]).Select(c => c.EndsWith(':') ? "num" : "").ToArray()
            : new string[header.Length];
        var body = rows.Skip(aligns.Length > 0 && rows.Length > 1 && rows[1].Contains("---", StringComparison.Ordinal) ? 2 : 1);
        sb.Append("<div class=\"table-wrap\"><table>\n<thead><tr>");
        for (var c = 0; c < header.Length; c++) sb.Append(Cell("th", header[c], Align(aligns, c)));
        sb.Append("</tr></thead>\n<tbody>\n");
        foreach (var row in body)
        {
            sb.Append("<tr>");
            var cells = Cells(row);
            for (var c = 0; c < cells.Length; c++) sb.Append(Cell("td", cells[c], Align(aligns, c)));
            sb.Append("</tr>\n");
        }
        sb.Append("</tbody></table></div>\n");
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
