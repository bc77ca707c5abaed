using Spectre.Console;
using TraceLab.Analyzers.Timeline;
using TraceLab.Cli;
using TraceLab.Reporting.Findings;
using Xunit;

namespace TraceLab.Tests.Cli;

/// <summary>
/// Findings on the terminal fit the 160-column rule (docs/metrics.md#terminal-width): a finding whose evidence, windows
/// and remedy run to hundreds of characters is wrapped and cut there, and report.md keeps every word.
/// </summary>
public sealed class TerminalFindingsWidthTests
{
    private static FindingSection Long() => new()
    {
        Kind = "lock-convoy",
        Severity = 0.42,
        Title = "Threads queue on one lock [futex 0x7f00] and hand it over one by one",
        Evidence = [.. Enumerable.Range(0, 40)
            .Select(i => new FindingFigure { Metric = $"convoy.figure{i}", Value = i * 1000.5 })],
        Threads = [.. Enumerable.Range(1000, 30)],
        Windows = [.. Enumerable.Range(0, 100).Select(i => TimelineWindow.Parse($"{i * 100}:50"))],
        Remedy = string.Join(" ", Enumerable.Repeat("shorten the critical section or split the lock;", 12)),
        Claims = ["TM1", "TM2"],
    };

    /// <summary>
    /// Renders with a console wider than any line, so only TraceLab's own fitting can keep lines short.
    /// </summary>
    private static List<string> Terminal(bool fit)
    {
        var text = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(text),
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
        });
        console.Profile.Width = 2000;
        TerminalSections.Write(console, FindingsMarkdown.View([Long()], hasSwitches: true), fitLines: fit);
        return [.. text.ToString().Split('\n').Select(l => l.TrimEnd('\r'))];
    }

    [Fact]
    public void Every_findings_line_fits_160_columns_and_long_ones_say_where_the_rest_is()
    {
        var lines = Terminal(fit: true);

        Assert.All(lines, l => Assert.True(l.Length <= TerminalLineFit.Width, $"{l.Length} columns: {l}"));
        // Evidence, windows and remedy are each cut after three lines, with a pointer to report.md.
        Assert.Equal(3, lines.Count(l => l.EndsWith(TerminalLineFit.Trimmed, StringComparison.Ordinal)));
        Assert.Contains(lines, l => l.Contains("[futex 0x7f00]", StringComparison.Ordinal));
        Assert.True(lines.Count <= 2 + 4 * TerminalLineFit.MaxLines, $"{lines.Count} lines");
    }

    [Fact]
    public void Without_the_cut_the_same_finding_is_wrapped_whole_within_160_columns()
    {
        // Other sections' note lines (process headings) are wrapped but never cut: every word stays.
        var lines = Terminal(fit: false);

        Assert.All(lines, l => Assert.True(l.Length <= TerminalLineFit.Width, $"{l.Length} columns: {l}"));
        Assert.DoesNotContain(lines, l => l.EndsWith(TerminalLineFit.Trimmed, StringComparison.Ordinal));
        Assert.True(lines.Count > 2 + 4 * TerminalLineFit.MaxLines, $"{lines.Count} lines");
        Assert.Contains(lines, l => l.Contains("9900:50", StringComparison.Ordinal));
    }

    [Fact]
    public void Report_md_keeps_the_whole_text()
    {
        var md = string.Join("\n", FindingsMarkdown.Markdown([Long()], hasSwitches: true));

        Assert.Contains("`convoy.figure39` = 39019.5", md, StringComparison.Ordinal);
        Assert.Contains("`9900:50`", md, StringComparison.Ordinal);
        Assert.Contains(string.Join(" ", Enumerable.Repeat("shorten the critical section or split the lock;", 12)), md,
            StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("[bold]short[/] line")]
    [InlineData("")]
    public void A_line_that_fits_is_left_as_it_is(string markup) =>
        Assert.Equal([markup], TerminalLineFit.Fit(markup));

    [Fact]
    public void Wrapped_lines_keep_their_markup_balanced_and_escapes_whole()
    {
        var markup = "[grey]evidence:[/] [bold]" + string.Join(" ", Enumerable.Repeat("a[[b]]c", 60)) + "[/] tail";
        var lines = TerminalLineFit.Fit(markup, width: 40, maxLines: 20);

        Assert.True(lines.Count > 1);
        foreach (var line in lines)
        {
            // Each is valid markup on its own (Spectre throws on an unbalanced tag) and at most 40 columns.
            var plain = new Markup(line).ToString();
            Assert.True(Markup.Remove(line).Length <= 40, line);
            Assert.DoesNotContain("[[[", line, StringComparison.Ordinal);
            Assert.NotNull(plain);
        }
        Assert.Equal(Markup.Remove(markup).Replace(" ", "", StringComparison.Ordinal),
            string.Concat(lines.Select(l => Markup.Remove(l).Replace(" ", "", StringComparison.Ordinal))));
    }

    [Fact]
    public void A_word_longer_than_a_line_is_cut_at_the_width()
    {
        var lines = TerminalLineFit.Fit(new string('x', 100), width: 40, maxLines: 5);

        Assert.Equal([40, 40, 30], lines.Select(l => l.Length));
        Assert.Equal(new string('x', 100), string.Concat(lines.Select(l => l.Trim())));
    }
}
