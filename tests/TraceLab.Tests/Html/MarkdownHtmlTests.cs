using System.Net;
using System.Text.RegularExpressions;
using TraceLab.Reporting.Html;

namespace TraceLab.Tests.Html;

/// <summary>
/// report.md → HTML written in place (no string per line or cell): the same text as escaping each piece whole and
/// then turning `code` spans into &lt;code&gt;, on the characters where the two could part.
/// </summary>
public sealed partial class MarkdownHtmlTests
{
    /// <summary>Inline text as the converter first did it: the whole piece escaped, then the spans replaced.</summary>
    private static string Reference(string text) =>
        CodeSpan().Replace(WebUtility.HtmlEncode(text), m => $"<code>{m.Groups[1].Value}</code>");

    [GeneratedRegex("`([^`]*)`")]
    private static partial Regex CodeSpan();

    public static TheoryData<string> Texts => new()
    {
        "plain words",
        "a `code` span and `another` one",
        "an unmatched ` backtick",
        "`` empty span, then `x` and a last `",
        "<b>not markup</b> & \"quotes\" 'single'",
        "`<in code> & more`",
        "non-breaking\u00a0space, é, ÿ, Ā (U+0100 is not escaped)",
        "a surrogate pair 😀 in `code 😀` and out",
        "a lone high surrogate \ud83d then text",
        "\u00a0leading and trailing\u00a0",
    };

    [Theory]
    [MemberData(nameof(Texts))]
    public void A_paragraph_is_the_reference_escaping(string text) =>
        Assert.Equal($"<p>{Reference(text)}</p>\n", MarkdownHtml.Convert(text));

    [Theory]
    [MemberData(nameof(Texts))]
    public void A_list_item_a_heading_and_a_summary_are_the_reference_escaping(string text)
    {
        Assert.Equal($"<ul>\n<li>{Reference(text)}</li>\n</ul>\n", MarkdownHtml.Convert("- " + text));
        Assert.Equal($"<summary>{Reference(text)}</summary>\n", MarkdownHtml.Convert($"<summary>{text}</summary>"));
        Assert.Equal(
            $"<h3 id=\"{MarkdownHtml.Slug(text)}\">{Reference(text)}</h3>\n", MarkdownHtml.Convert("### " + text));
    }

    [Theory]
    [MemberData(nameof(Texts))]
    public void A_table_cell_is_the_reference_escaping_of_the_trimmed_cell(string text)
    {
        var html = MarkdownHtml.Convert($"| a | b |\n|---|--:|\n|  {text}  | `x` |\r\n| |");
        var cell = Reference(text.Trim());
        Assert.Equal(
            "<div class=\"table-wrap\"><table>\n<thead><tr><th>a</th><th class=\"num\">b</th></tr></thead>\n<tbody>\n"
            + $"<tr><td>{cell}</td><td class=\"num\"><code>x</code></td></tr>\n<tr><td></td></tr>\n"
            + "</tbody></table></div>\n",
            html);
    }

    [Fact]
    public void A_long_table_is_written_without_a_string_per_row_or_cell()
    {
        var md = "| tid | name | state |\n|---:|---|---|\n"
            + string.Concat(Enumerable.Range(0, 20_000).Select(i => $"| {i} | worker-{i} | `blocked` |\n"));
        MarkdownHtml.Write(TextWriter.Null, md, 0, md.Length);
        var before = GC.GetAllocatedBytesForCurrentThread();
        MarkdownHtml.Write(TextWriter.Null, md, 0, md.Length);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        // The line index is 4 bytes a line (with its growth, under 16); a string per line or cell was ~14 a character.
        Assert.True(allocated < md.Length, $"{allocated:N0} bytes allocated for {md.Length:N0} characters");
    }

    [Fact]
    public void Cells_split_on_every_inner_pipe_and_trim()
    {
        Assert.Equal(["a", "b c", "", "d"], MarkdownHtml.Cells("  | a |  b c ||d|  "));
        Assert.Equal([""], MarkdownHtml.Cells("|"));
        Assert.Equal(["x"], MarkdownHtml.Cells("x"));
    }
}
