using System.Text;

namespace TraceLab.Reporting.Tables;

/// <summary>Writes a section's blocks as report.md text (report.html converts that text).</summary>
public static class MarkdownRenderer
{
    public static void Write(StringBuilder sb, IEnumerable<ReportBlock> blocks, RowLimit? limit = null)
    {
        foreach (var block in blocks)
        {
            switch (block)
            {
                case MarkdownText text:
                    foreach (var line in text.Lines) sb.AppendLine(line);
                    break;
                case TableBlock { Table: var table } when (table.In & Shown.Markdown) != 0:
                    Table(sb, table, limit ?? RowLimit.None);
                    break;
            }
        }
    }

    /// <summary>The table, then a blank line.</summary>
    public static void Table(StringBuilder sb, ReportTable table, RowLimit limit)
    {
        var columns = Enumerable.Range(0, table.Columns.Count)
            .Where(i => (table.Columns[i].In & Shown.Markdown) != 0).ToArray();
        var shown = limit.RowsShown(table, tableLimit: null);
        if (shown.Count == 0 && table.RowCount > 0)
        {
            // Every row was left out (none about the threads shown): the note alone.
            if (limit.MoreNote is { } note) sb.AppendLine(note(table.RowCount, table)).AppendLine();
            return;
        }
        // A long table: its first rows, then the long tail as a collapsed list (report.html keeps it collapsed).
        var open = table.MarkdownCollapseAfter is { } fold && shown.Count > fold + 1 ? fold : shown.Count;
        Header(sb, table, columns);
        for (var k = 0; k < open; k++) Row(sb, table.Row(shown[k]), columns);
        if (open < shown.Count)
        {
            sb.AppendLine().AppendLine("<details>")
                .AppendLine($"<summary>{shown.Count - open:N0} more {table.RowNoun}</summary>").AppendLine();
            Header(sb, table, columns);
            for (var k = open; k < shown.Count; k++) Row(sb, table.Row(shown[k]), columns);
            sb.AppendLine().AppendLine("</details>");
        }
        if (shown.Count < table.RowCount && limit.MoreNote is { } more)
            sb.AppendLine().AppendLine(more(table.RowCount - shown.Count, table));
        sb.AppendLine();
    }

    private static void Header(StringBuilder sb, ReportTable table, int[] columns)
    {
        sb.Append('|');
        foreach (var i in columns) sb.Append(' ').Append(table.Columns[i].Heading).Append(" |");
        sb.AppendLine();
        sb.Append('|');
        foreach (var i in columns) sb.Append(table.Columns[i].Align == CellAlign.Right ? "---:|" : "---|");
        sb.AppendLine();
    }

    private static void Row(StringBuilder sb, Cell[] row, int[] columns)
    {
        sb.Append('|');
        foreach (var i in columns) sb.Append(' ').Append(row[i].Text).Append(" |");
        sb.AppendLine();
    }
}
