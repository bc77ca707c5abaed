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
        sb.Append('|');
        foreach (var i in columns) sb.Append(' ').Append(table.Columns[i].Heading).Append(" |");
        sb.AppendLine();
        sb.Append('|');
        foreach (var i in columns) sb.Append(table.Columns[i].Align == CellAlign.Right ? "---:|" : "---|");
        sb.AppendLine();
        var shown = limit.Shown(table, tableLimit: null);
        for (var r = 0; r < shown; r++)
        {
            var row = table.Rows[r];
            sb.Append('|');
            foreach (var i in columns) sb.Append(' ').Append(row[i].Text).Append(" |");
            sb.AppendLine();
        }
        if (shown < table.Rows.Count && limit.MoreNote is { } more)
            sb.AppendLine().AppendLine(more(table.Rows.Count - shown));
        sb.AppendLine();
    }
}
