using Spectre.Console;
using TraceLab.Reporting.Tables;

namespace TraceLab.Cli;

/// <summary>Renders a report section's blocks (<see cref="ReportTable"/>s and notes) on the terminal.</summary>
internal static class TerminalSections
{
    /// <param name="limit">Rows shown per table, besides a table's own terminal limit (none by default).</param>
    public static void Write(IAnsiConsole console, IEnumerable<ReportBlock> blocks, RowLimit? limit = null)
    {
        foreach (var block in blocks)
        {
            switch (block)
            {
                case TerminalLine line: console.MarkupLine(line.Markup); break;
                case TableBlock { Table: var table } when (table.In & Shown.Terminal) != 0:
                    Table(console, table, limit ?? RowLimit.None);
                    break;
            }
        }
    }

    private static void Table(IAnsiConsole console, ReportTable table, RowLimit limit)
    {
        var columns = Enumerable.Range(0, table.Columns.Count)
            .Where(i => (table.Columns[i].In & Shown.Terminal) != 0).ToArray();
        var t = new Table().Border(TableBorder.Rounded).Title($"[bold]{Markup.Escape(table.TerminalTitle)}[/]");
        foreach (var i in columns)
        {
            var c = table.Columns[i];
            t.AddColumn(new TableColumn(Markup.Escape(c.TerminalHeading ?? c.Heading))
            {
                Alignment = (c.TerminalAlign ?? c.Align) == CellAlign.Left ? Justify.Left : Justify.Right,
            });
        }
        var shown = limit.Shown(table, table.TerminalRowLimit);
        for (var r = 0; r < shown; r++)
        {
            var row = table.Rows[r];
            t.AddRow(columns.Select(i => Markup.Escape(row[i].Terminal ?? row[i].Text)).ToArray());
        }
        console.Write(t);
        if (shown < table.Rows.Count && limit.MoreNote is { } more)
            console.MarkupLine($"[grey]{Markup.Escape(more(table.Rows.Count - shown))}[/]");
    }
}
