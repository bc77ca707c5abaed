using System.Text;
using TraceLab.Reporting;
using TraceLab.Reporting.Sections;
using TraceLab.Reporting.Tables;

namespace TraceLab.Tests.Reporting;

/// <summary>A section's table is data rendered per target; row limits belong to the renderer.</summary>
public sealed class ReportTableTests
{
    private static ReportTable Table()
    {
        var table = new ReportTable("T",
        [
            new("tid"), Column.Left("name"), new("wakeups received", TerminalHeading: "wk recv"),
            Column.MarkdownOnly("iterations"),
        ]);
        for (var i = 1; i <= 5; i++) table.Add($"{i}", $"t{i}", new($"{i * 10}", $"{i}0*"), $"{i * 100}");
        return table;
    }

    [Fact]
    public void Markdown_shows_its_headings_alignments_and_cells_then_a_blank_line()
    {
        var sb = new StringBuilder();
        MarkdownRenderer.Write(sb, [new MarkdownText("## T", ""), new TableBlock(Table())]);
        var lines = sb.ToString().Split(Environment.NewLine);
        Assert.Equal("## T", lines[0]);
        Assert.Equal("| tid | name | wakeups received | iterations |", lines[2]);
        Assert.Equal("|---:|---|---:|---:|", lines[3]);
        Assert.Equal("| 1 | t1 | 10 | 100 |", lines[4]);
        Assert.Equal(["| 5 | t5 | 50 | 500 |", "", ""], lines[8..]);
    }

    [Fact]
    public void Rows_about_threads_are_built_only_when_a_renderer_shows_them()
    {
        // A whole system's report: 1,000 thread rows, of which report.md shows the 5 of the detailed threads.
        var built = new List<int>();
        var table = new ReportTable("T", [new("tid"), Column.Left("name")]);
        table.AddThreadRows(Enumerable.Range(1, 1000).ToList(), tid => tid, tid =>
        {
            built.Add(tid);
            return [$"{tid}", $"t{tid}"];
        });
        var detailed = new HashSet<int> { 7, 300, 301, 302, 999 };
        var sb = new StringBuilder();

        MarkdownRenderer.Write(sb, [new TableBlock(table)],
            new RowLimit(ThreadFilter: detailed.Contains, MoreNote: (left, _) => $"… {left} more"));

        Assert.Equal(1000, table.RowCount);
        Assert.Equal([7, 300, 301, 302, 999], built);
        Assert.Contains("| 300 | t300 |", sb.ToString(), StringComparison.Ordinal);
        Assert.Contains("… 995 more", sb.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_renderer_row_limit_cuts_each_table_and_says_how_many_rows_are_left_out()
    {
        var sb = new StringBuilder();
        MarkdownRenderer.Write(sb, [new TableBlock(Table())], new RowLimit(2, (left, _) => $"… {left} more"));
        var text = sb.ToString();
        Assert.Contains("| 2 | t2 |", text);
        Assert.DoesNotContain("| 3 | t3 |", text);
        Assert.Contains("… 3 more", text);
    }

    [Fact]
    public void Markdown_leaves_out_terminal_only_tables_and_a_row_must_fill_every_column()
    {
        var sb = new StringBuilder();
        var terminalOnly = new ReportTable("x", [new("a")]) { In = Shown.Terminal }.Add("1");
        MarkdownRenderer.Write(sb, [new TableBlock(terminalOnly), new TerminalLine("[bold]x[/]")]);
        Assert.Equal("", sb.ToString());
        Assert.Throws<ArgumentException>(() => Table().Add("1", "2"));
    }

    [Fact]
    public void Report_json_writes_each_registered_section_under_its_name_and_reads_it_back()
    {
        var report = new RunReport
        {
            Capture = new CaptureSection { Backend = "tracefs", TraceFile = "trace.dat" },
            Region = new RegionSection { Source = "markers" },
            Threads = [],
            Smp = new SmpSection { Totals = new SmpTotalsSection { Migrations = 7 } },
            Warnings = ["w"],
        };
        var json = ReportJson.Serialize(report);
        // Sections sit between threads and warnings, in registration order.
        int At(string name) => json.IndexOf($"\"{name}\"", StringComparison.Ordinal);
        Assert.True(At("threads") < At("smp") && At("smp") < At("warnings"));
        Assert.DoesNotContain("\"kernel\"", json);
        var back = ReportJson.Deserialize(json);
        Assert.Equal(7, back.Smp!.Totals.Migrations);
        Assert.Null(back.Kernel);
        Assert.Equal(json, ReportJson.Serialize(back));
        Assert.Same(back.Smp, back.SectionOf(AnalysisReports.Smp));
    }
}
