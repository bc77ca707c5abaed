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
        var shown = limit.RowsShown(table, table.TerminalRowLimit);
        var cells = shown.Select(table.Row).ToList();
        var columns = Enumerable.Range(0, table.Columns.Count)
            .Where(i => (table.Columns[i].In & Shown.Terminal) != 0).ToList();
        var dropped = DropForWidth(table, cells, columns, console.Profile.Width);
        var t = new Table().Border(TableBorder.Rounded).Title($"[bold]{Markup.Escape(table.TerminalTitle)}[/]");
        foreach (var i in columns)
        {
            var c = table.Columns[i];
            t.AddColumn(new TableColumn(Markup.Escape(Heading(c)))
            {
                Alignment = (c.TerminalAlign ?? c.Align) == CellAlign.Left ? Justify.Left : Justify.Right,
            });
        }
        foreach (var row in cells)
            t.AddRow(columns.Select(i => Markup.Escape(row[i].Terminal ?? row[i].Text)).ToArray());
        // A table whose rows were all left out (none about the threads shown) is just its note.
        if (shown.Count > 0 || table.RowCount == 0) console.Write(t);
        else console.MarkupLine($"[bold]{Markup.Escape(table.TerminalTitle)}[/]");
        if (dropped.Count > 0 && shown.Count > 0)
            console.MarkupLine($"[grey]{Markup.Escape(string.Join(", ", dropped))}: left out for width (report.md)[/]");
        // A small table cut by its own limit (the lock objects' 8) is the section's choice, not worth a note.
        var cut = shown.Count < table.RowCount
            && (limit.MaxRows is { } max && table.RowCount > max || limit.ThreadFilter is not null
                && table.RowTids is not null);
        if (cut && limit.MoreNote is { } more)
            console.MarkupLine($"[grey]{Markup.Escape(more(table.RowCount - shown.Count, table))}[/]");
    }

    /// <summary>
    /// Leaves out columns with a <see cref="Column.TerminalDropOrder"/>, lowest first, while the table's natural
    /// width (widest cell or heading of each column, one space each side, a border between and around) exceeds
    /// <paramref name="width"/>. Returns the terminal headings left out.
    /// </summary>
    private static List<string> DropForWidth(ReportTable table, List<Cell[]> rows, List<int> columns, int width)
    {
        var widths = columns.ToDictionary(i => i, i => rows.Select(r => (r[i].Terminal ?? r[i].Text).Length)
            .Append(Heading(table.Columns[i]).Length).Max() + 2);
        var droppable = columns.Where(i => table.Columns[i].TerminalDropOrder is not null)
            .OrderBy(i => table.Columns[i].TerminalDropOrder).ToList();
        var dropped = new List<string>();
        foreach (var i in droppable)
        {
            if (columns.Sum(c => widths[c]) + columns.Count + 1 <= width) break;
            columns.Remove(i);
            dropped.Add(Heading(table.Columns[i]));
        }
        return dropped;
    }

    private static string Heading(Column c) => c.TerminalHeading ?? c.Heading;
}
