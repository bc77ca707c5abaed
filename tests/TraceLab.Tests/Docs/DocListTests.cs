using System.Text.RegularExpressions;
using TraceLab.Formats.Registry;
using TraceLab.Reporting;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.Tests.Docs;

/// <summary>
/// The lists the docs give by hand equal the code's registrations: the analysis names (README's `--analysis`
/// paragraph, metrics.md's selection sentence and table, report-schema.md's `analyses` row and example) equal
/// <see cref="AnalysisReports.All"/>, and formats.md's format list equals <see cref="TraceFormats.All"/>, both in
/// order. tools/check.sh runs these with the other rule checks.
/// </summary>
public sealed partial class DocListTests
{
    private static readonly string[] Analyses = [.. AnalysisReports.All.Select(a => a.Analysis.Name)];

    [Fact]
    public void Readme_analysis_paragraph_names_every_analysis_in_order()
    {
        var paragraph = Paragraph(Read("README.md"), "`--analysis` picks the report's sections");
        // The paragraph names each analysis in backticks (`--analysis` itself has dashes, so it is not matched).
        Assert.Equal(Analyses, Names(paragraph, "`([a-z]+)`"));
    }

    [Fact]
    public void Metrics_selection_sentence_and_table_name_every_analysis_in_order()
    {
        var section = Section("docs/metrics.md", "<a id=\"analyses\"></a>");
        var sentence = Paragraph(section, "**Selection.**");
        var from = sentence.IndexOf("list of", StringComparison.Ordinal);
        var listed = Names(sentence[from..sentence.IndexOf("(default", from, StringComparison.Ordinal)], "`([a-z]+)`");
        Assert.Equal([.. Analyses, "all"], listed);
        Assert.Equal(Analyses, Names(section, @"(?m)^\| `([a-z]+)` \|"));
    }

    [Fact]
    public void Report_schema_analyses_row_and_example_name_every_analysis_in_order()
    {
        var schema = Read("docs/report-schema.md");
        var row = schema.Split('\n').Single(l => l.StartsWith("| `analyses` |", StringComparison.Ordinal));
        Assert.Equal(Analyses, Names(row[row.IndexOf("in the order", StringComparison.Ordinal)..], "`([a-z]+)`"));
        var example = schema.Split('\n')
            .Single(l => l.TrimStart().StartsWith("\"analyses\":", StringComparison.Ordinal));
        Assert.Equal(Analyses, Names(example, "\"([a-z]+)\"(?!:)"));
    }

    [Fact]
    public void Formats_list_names_every_trace_format_in_detection_order()
    {
        var list = Paragraph(Read("docs/formats.md"), "<a id=\"format-list\"></a>");
        Assert.Equal(TraceFormats.All.Names, Names(list, "`([a-z.]+)`"));
    }

    [Fact]
    public void Name_extraction_sees_a_missing_or_extra_name()
    {
        // The helpers must not pass a list that lacks an analysis: a paragraph without `findings` differs.
        var shortened = "`--analysis` picks: `threads` (a), `kernel` (b)";
        Assert.NotEqual(Analyses, Names(shortened, "`([a-z]+)`"));
        Assert.Equal(["threads", "kernel"], Names(shortened, "`([a-z]+)`"));
    }

    private static string Read(string relative) => File.ReadAllText(Path.Combine(RepoPaths.Root, relative));

    private static string[] Names(string text, string pattern) =>
        [.. Regex.Matches(text, pattern).Select(m => m.Groups[1].Value)];

    /// <summary>From the line holding <paramref name="marker"/> to the next heading of the same file.</summary>
    private static string Section(string relative, string marker)
    {
        var text = Read(relative);
        var start = text.IndexOf(marker, StringComparison.Ordinal);
        Assert.True(start >= 0, $"{relative} has no {marker}");
        var heading = HeadingAfter().Match(text, text.IndexOf('\n', start) + 1);
        var next = heading.Success ? HeadingAfter().Match(text, heading.Index + heading.Length) : heading;
        return text[start..(next.Success ? next.Index : text.Length)];
    }

    /// <summary>The paragraph (up to a blank line) that starts at <paramref name="start"/>.</summary>
    private static string Paragraph(string text, string start)
    {
        var i = text.IndexOf(start, StringComparison.Ordinal);
        Assert.True(i >= 0, $"no paragraph starting with {start}");
        var end = text.IndexOf("\n\n", i, StringComparison.Ordinal);
        return text[i..(end < 0 ? text.Length : end)];
    }

    [GeneratedRegex(@"(?m)^#{1,6} ")]
    private static partial Regex HeadingAfter();
}
