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
/// <param name="TerminalDropOrder">
/// Where the terminal table would be wider than the console (160 columns at most): columns with a drop order are
/// left out there, the lowest first, until it fits (report.md keeps them). Null: always shown.
/// </param>
public sealed record Column(
    string Heading, CellAlign Align = CellAlign.Right, string? TerminalHeading = null, CellAlign? TerminalAlign = null,
    Shown In = Shown.Everywhere, int? TerminalDropOrder = null)
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
public sealed class ReportTable(string terminalTitle, IReadOnlyList<Column> columns)
{
    /// <summary>The terminal's title above the table (report.md's tables sit under the section's heading).</summary>
    public string TerminalTitle { get; } = terminalTitle;

    public IReadOnlyList<Column> Columns { get; } = columns;

    private readonly List<Cell[]> _rows = [];
    /// <summary>Builds row r of a table whose rows are built when shown (<see cref="AddThreadRows"/>).</summary>
    private Func<int, Cell[]>? _buildRow;

    /// <summary>The number of rows, shown or not.</summary>
    public int RowCount => _buildRow is null ? _rows.Count : RowTids!.Count;

    /// <summary>Row <paramref name="index"/>'s cells (built now when the table builds its rows when shown).</summary>
    public Cell[] Row(int index)
    {
        if (_buildRow is null) return _rows[index];
        var cells = _buildRow(index);
        return cells.Length == Columns.Count ? cells : throw new InvalidOperationException(
            $"a row of {cells.Length} cells in a table of {Columns.Count} columns");
    }

    /// <summary>The renderings that show this table.</summary>
    public Shown In { get; init; } = Shown.Everywhere;

    /// <summary>
    /// At most this many rows on the terminal (the first ones); null: all. A renderer may apply a limit of its own
    /// (<see cref="RowLimit"/>).
    /// </summary>
    public int? TerminalRowLimit { get; init; }

    /// <summary>
    /// report.md shows this many rows and folds the rest into a collapsed list (&lt;details&gt;, collapsed in
    /// report.html too); null: every row in the table.
    /// </summary>
    public int? MarkdownCollapseAfter { get; init; }

    /// <summary>What a row is, in the plural, for the note under a cut table ("… 760 more threads").</summary>
    public string RowNoun { get; init; } = "rows";

    /// <summary>
    /// The thread each row is about (one per row), when every row is about one thread: a renderer that shows only
    /// some rows ranks them by thread (<see cref="RowLimit.ThreadRank"/>). Null: the rows are ranked as they stand.
    /// </summary>
    public List<int>? RowTids { get; private set; }

    /// <summary>Adds a row: one cell per column.</summary>
    public ReportTable Add(params Cell[] cells)
    {
        if (cells.Length != Columns.Count)
            throw new ArgumentException($"a row of {cells.Length} cells in a table of {Columns.Count} columns");
        if (RowTids is not null) throw new InvalidOperationException("every row of this table is about a thread");
        _rows.Add(cells);
        return this;
    }

    /// <summary>Adds a row about thread <paramref name="tid"/> (all rows of a table are, or none).</summary>
    public ReportTable AddForThread(int tid, params Cell[] cells)
    {
        if (_rows.Count > 0 && RowTids is null)
            throw new InvalidOperationException("rows of this table are not about threads");
        if (_buildRow is not null) throw new InvalidOperationException("the rows of this table are built when shown");
        if (cells.Length != Columns.Count)
            throw new ArgumentException($"a row of {cells.Length} cells in a table of {Columns.Count} columns");
        (RowTids ??= []).Add(tid);
        _rows.Add(cells);
        return this;
    }

    /// <summary>
    /// Makes the rows one per item, each about thread <paramref name="tid"/> of its item, with the cells
    /// <paramref name="cells"/> gives it built only when a renderer shows the row: a report of 100,000 threads shows
    /// a few thousand rows, and every row as strings was ~1 KB (docs/performance.md#many-threads). The table must be
    /// empty and takes no other rows; <paramref name="cells"/> must give the same cells each time.
    /// </summary>
    public ReportTable AddThreadRows<T>(IReadOnlyList<T> items, Func<T, int> tid, Func<T, Cell[]> cells)
    {
        if (RowCount > 0 || _buildRow is not null) throw new InvalidOperationException("the table already has rows");
        var tids = new List<int>(items.Count);
        foreach (var item in items) tids.Add(tid(item));
        RowTids = tids;
        _buildRow = r => cells(items[r]);
        return this;
    }
}

/// <summary>
/// How many rows a renderer shows of a table, and what it says about the rest (null: nothing). Every renderer has
/// one; report.md's is unlimited, the terminal's shows the 10 highest-ranked rows.
/// </summary>
/// <param name="MaxRows">At most this many rows of any table; null: all.</param>
/// <param name="MoreNote">The line shown under a cut table, given how many rows were left out and the table.</param>
/// <param name="ThreadRank">
/// Ranks the rows of a table about threads when not all are shown (larger first): the shown rows are the
/// highest-ranked, in rank order. Null, or a table whose rows are not about threads: the first rows, as they stand.
/// </param>
/// <param name="ThreadFilter">
/// Rows about threads this rejects are left out (with the note); null: none. A report without a target shows the
/// threads of its top processes in the sections (report.json keeps all).
/// </param>
public sealed record RowLimit(
    int? MaxRows = null, Func<int, ReportTable, string>? MoreNote = null, IComparer<int>? ThreadRank = null,
    Func<int, bool>? ThreadFilter = null)
{
    public static readonly RowLimit None = new();

    /// <summary>
    /// The number of rows to show of <paramref name="table"/>, given its own limit for this renderer.
    /// </summary>
    public int Shown(ReportTable table, int? tableLimit)
    {
        var n = table.RowCount;
        if (tableLimit is { } t) n = Math.Min(n, t);
        if (MaxRows is { } m) n = Math.Min(n, m);
        return n;
    }

    /// <summary>
    /// The rows to show, by index: all in table order when nothing is cut, else the highest-ranked ones in rank order
    /// (a top-k selection, O(rows · log k): a table of 100,000 threads is not sorted to show 10).
    /// </summary>
    public IReadOnlyList<int> RowsShown(ReportTable table, int? tableLimit)
    {
        if (ThreadFilter is { } keep && table.RowTids is { } rowTids)
            return Filtered(table, tableLimit, rowTids, keep);
        var shown = Shown(table, tableLimit);
        if (shown == table.RowCount || ThreadRank is not { } rank || table.RowTids is not { } tids)
            return Enumerable.Range(0, shown).ToArray();
        // A min-heap of the best `shown` rows so far; ties go to the earlier row (the table's own order).
        var byRank = Comparer<int>.Create((a, b) =>
        {
            var c = rank.Compare(tids[a], tids[b]);
            return c != 0 ? c : b.CompareTo(a);
        });
        var heap = new PriorityQueue<int, int>(shown + 1, byRank);
        for (var r = 0; r < tids.Count && shown > 0; r++)
        {
            if (heap.Count < shown) heap.Enqueue(r, r);
            else if (byRank.Compare(r, heap.Peek()) > 0) heap.EnqueueDequeue(r, r);
        }
        var best = new int[heap.Count];
        for (var i = best.Length - 1; i >= 0; i--) best[i] = heap.Dequeue();
        return best;
    }

    /// <summary>The kept rows (<see cref="ThreadFilter"/>), at most the limit of them, highest-ranked first.</summary>
    private List<int> Filtered(ReportTable table, int? tableLimit, List<int> tids, Func<int, bool> keep)
    {
        var kept = new List<int>();
        for (var r = 0; r < tids.Count; r++)
            if (keep(tids[r])) kept.Add(r);
        var max = Math.Min(tableLimit ?? int.MaxValue, MaxRows ?? int.MaxValue);
        if (kept.Count <= max) return kept;
        if (ThreadRank is { } rank)
            kept.Sort((a, b) => rank.Compare(tids[b], tids[a]) is var c && c != 0 ? c : a.CompareTo(b));
        return kept.GetRange(0, max);
    }
}
