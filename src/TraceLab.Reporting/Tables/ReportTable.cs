namespace TraceLab.Reporting.Tables;

/// <summary>How a column's cells line up.</summary>
public enum CellAlign { Left, Right }

/// <summary>Where a column or block appears.</summary>
[Flags]
public enum Shown
{
    Markdown = 1,
    Terminal = 2,
    Everywhere = Markdown | Terminal,
}

/// <summary>
/// One column, spelled once: its heading in report.md (and report.html, made from it) and, where the terminal's
/// narrower table says it shorter, there.
/// </summary>
/// <param name="Heading">report.md's heading.</param>
/// <param name="Align">How the cells line up (in both renderings unless <paramref name="TerminalAlign"/> says).</param>
/// <param name="TerminalHeading">The terminal's heading; null: <paramref name="Heading"/>.</param>
/// <param name="TerminalAlign">The terminal's alignment; null: <paramref name="Align"/>.</param>
/// <param name="In">The renderings that show this column.</param>
public sealed record Column(
    string Heading, CellAlign Align = CellAlign.Right, string? TerminalHeading = null, CellAlign? TerminalAlign = null,
    Shown In = Shown.Everywhere)
{
    public static Column Left(string heading, string? terminalHeading = null) =>
        new(heading, CellAlign.Left, terminalHeading);

    public static Column MarkdownOnly(string heading, CellAlign align = CellAlign.Right) =>
        new(heading, align, In: Shown.Markdown);

    public static Column TerminalOnly(string heading, CellAlign align = CellAlign.Right) =>
        new(heading, align, In: Shown.Terminal);
}

/// <summary>A cell: its text, and a shorter or differently formatted one for the terminal where that differs.</summary>
public readonly record struct Cell(string Text, string? Terminal = null)
{
    public static implicit operator Cell(string text) => new(text);
}

/// <summary>
/// A table of a report section as data: columns, rows, and the title the terminal shows above it. Built once;
/// rendered by TraceLab.Reporting's <see cref="MarkdownRenderer"/> (report.md, and so report.html) and the CLI's
/// terminal renderer. Every row has one cell per column, in column order.
/// </summary>
public sealed class ReportTable
{
    public ReportTable(string terminalTitle, IReadOnlyList<Column> columns)
    {
        TerminalTitle = terminalTitle;
        Columns = columns;
    }

    /// <summary>The terminal's title above the table (report.md's tables sit under the section's heading).</summary>
    public string TerminalTitle { get; }

    public IReadOnlyList<Column> Columns { get; }

    public List<Cell[]> Rows { get; } = [];

    /// <summary>The renderings that show this table.</summary>
    public Shown In { get; init; } = Shown.Everywhere;

    /// <summary>
    /// At most this many rows on the terminal (the first ones); null: all. A renderer may apply a limit of its own
    /// (<see cref="RowLimit"/>).
    /// </summary>
    public int? TerminalRowLimit { get; init; }

    /// <summary>Adds a row: one cell per column.</summary>
    public ReportTable Add(params Cell[] cells)
    {
        if (cells.Length != Columns.Count)
            throw new ArgumentException($"a row of {cells.Length} cells in a table of {Columns.Count} columns");
        Rows.Add(cells);
        return this;
    }
}

/// <summary>
/// How many rows a renderer shows of a table, and what it says about the rest (null: nothing). Every renderer has
/// one; today's are unlimited except where a table sets its own terminal limit.
/// </summary>
/// <param name="MaxRows">At most this many rows of any table; null: all.</param>
/// <param name="MoreNote">The line shown under a cut table, given how many rows were left out; null: none.</param>
public sealed record RowLimit(int? MaxRows = null, Func<int, string>? MoreNote = null)
{
    public static readonly RowLimit None = new();

    /// <summary>The rows to show of <paramref name="table"/>, given the table's own limit for this renderer.</summary>
    public int Shown(ReportTable table, int? tableLimit)
    {
        var n = table.Rows.Count;
        if (tableLimit is { } t) n = Math.Min(n, t);
        if (MaxRows is { } m) n = Math.Min(n, m);
        return n;
    }
}
