using TraceLab.Analyzers;
using TraceLab.Analyzers.Wakeups;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Sections;

/// <summary>The "wakeups" analysis in the report: who woke whom, futile and spurious wakeups, wakeup latency.</summary>
public sealed class WakeupReport() : AnalysisReport<WakeupAnalyzer, WakeupSection>(Analyses.Wakeups, "wakeups")
{
    protected override WakeupSection Build(WakeupAnalyzer w, ReportContext context) =>
        WakeupSectionBuilder.Build(w, context.Accounting, context.Tids, context.Names);

    protected override IReadOnlyList<ReportBlock> View(WakeupSection w)
    {
        List<Column> heads = [Column.Left("woken", "woken \\ waker")];
        heads.AddRange(w.Wakers.Select(x => new Column(x > 0 ? Format.Tid(x) : Format.Int(x),
            TerminalHeading: x switch
            {
                -1 => "irq/idle",
                0 => "other",
                _ => Format.Tid(x),
            })));
        var matrix = new ReportTable("Who woke whom (wakeups in the region)", heads) { RowNoun = "threads" };
        foreach (var row in w.Matrix)
            matrix.AddForThread(row.Woken, [$"{row.Name} ({Format.Tid(row.Woken)})", .. row.Counts.Select(Count)]);

        var threads = new ReportTable(
            $"Wakeups (futile: blocked again after < {w.FutileCpuThresholdNs / 1000} µs CPU without progress)",
        [
            new("tid"), Column.Left("name"), new("wakeups"), new("futile"), new("futile %"), new("spurious"),
            new("same-CPU n"), new("same-CPU p50 µs", TerminalHeading: "p50 µs"), new("p99 µs"), new("cross-CPU n"),
            new("cross-CPU p50 µs", TerminalHeading: "p50 µs"), new("p99 µs"),
        ])
        { RowNoun = "threads" };
        threads.AddThreadRows(w.Threads, t => t.Tid, t =>
        [
            Format.Tid(t.Tid), t.Name, Units.N(t.Wakeups), Units.N(t.Futile),
            new(Format.Pct(t.FutileShare), Format.P1(t.FutileShare)), Units.N(t.Spurious),
            Units.N(t.SameCpuLatency.Count), Units.Us(t.SameCpuLatency.P50Ns), Units.Us(t.SameCpuLatency.P99Ns),
            Units.N(t.CrossCpuLatency.Count), Units.Us(t.CrossCpuLatency.P50Ns), Units.Us(t.CrossCpuLatency.P99Ns),
        ]);

        return
        [
            new MarkdownText("## Wakeups", "",
                "Who woke whom (rows: woken thread; columns: waker; -1 = interrupt or idle context, 0 = any other " +
                "thread):", ""),
            new TableBlock(matrix),
            .. MatrixCut(w),
            new MarkdownText($"Futile: woken, then blocked again after less than {w.FutileCpuThresholdNs / 1000} µs " +
                "of CPU without progress (docs/metrics.md).", ""),
            new TableBlock(threads),
        ];
    }

    /// <summary>Says which threads the matrix has when it has not all (a small process's has all: no note).</summary>
    private static ReportBlock[] MatrixCut(WakeupSection w) => w.ThreadsNotInMatrix == 0
        ? []
        :
        [
            new MarkdownText($"The matrix has the {w.Matrix.Count} threads woken most; the other " +
                $"{Units.N(w.ThreadsNotInMatrix)} are in report.json (wakeups.threads[].wokenBy lists every " +
                "thread's wakers).", ""),
            new TerminalLine($"[grey]who woke whom: the {w.Matrix.Count} threads woken most; " +
                $"{Units.N(w.ThreadsNotInMatrix)} more in report.json[/]"),
        ];

    /// <summary>A matrix cell: the terminal shows none as "·".</summary>
    private static Cell Count(long n) => new(Units.N(n), n == 0 ? "·" : null);
}
