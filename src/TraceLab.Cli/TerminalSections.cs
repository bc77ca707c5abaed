using Spectre.Console;
using TraceLab.Reporting.Tables;

namespace TraceLab.Cli;

/// <summary>Renders a report section's blocks (<see cref="ReportTable"/>s and notes) on the terminal.</summary>
internal static class TerminalSections
{
    /// <summary>Narrower consoles get lines fitted to this and wrapped once more by the console.</summary>
    private const int MinFitWidth = 40;

    /// <param name="limit">Rows shown per table, besides a table's own terminal limit (none by default).</param>
    /// <param name="fitLines">
    /// Cut each note line after a few lines (<see cref="TerminalLineFit.MaxLines"/>): the findings, whose evidence and
    /// remedies can run to hundreds of characters. Other note lines are wrapped whole; all fit the terminal's columns.
    /// </param>
    public static void Write(IAnsiConsole console, IEnumerable<ReportBlock> blocks, RowLimit? limit = null,
        bool fitLines = false)
    {
        foreach (var block in blocks)
        {
            switch (block)
            {
                case TerminalLine line when fitLines:
                    foreach (var part in TerminalLineFit.Fit(line.Markup)) console.MarkupLine(part);
                    break;
                case TerminalLine line:
                    // Headings such as a process's ("Process 23098 csc (#1) 7 threads: …") wrap whole, indented.
                    var width = Math.Max(MinFitWidth, Math.Min(console.Profile.Width, TerminalLineFit.Width));
                    foreach (var part in TerminalLineFit.Fit(line.Markup, width, int.MaxValue))
                        console.MarkupLine(part);
                    break;
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
        var shown = limit.RowsShown(table, table.TerminalRowLimit);
        foreach (var r in shown)
        {
            var row = table.Row(r);
            t.AddRow(columns.Select(i => Markup.Escape(row[i].Terminal ?? row[i].Text)).ToArray());
        }
        // A table whose rows were all left out (none about the threads shown) is just its note.
        if (shown.Count > 0 || table.RowCount == 0) console.Write(t);
        else console.MarkupLine($"[bold]{Markup.Escape(table.TerminalTitle)}[/]");
        // A small table cut by its own limit (the lock objects' 8) is the section's choice, not worth a note.
        var cut = shown.Count < table.RowCount
            && (limit.MaxRows is { } max && table.RowCount > max || limit.ThreadFilter is not null && table.RowTids is not null);
        if (cut && limit.MoreNote is { } more)
            console.MarkupLine($"[grey]{Markup.Escape(more(table.RowCount - shown.Count, table))}[/]");
    }
}
