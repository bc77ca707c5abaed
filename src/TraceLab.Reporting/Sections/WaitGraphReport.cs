using TraceLab.Analyzers;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Sections;

/// <summary>The "waitgraph" analysis in the report: what the process waited on (cascaded), knots, wait edges.</summary>
public sealed class WaitGraphReport()
    : AnalysisReport<WaitForGraphAnalyzer, WaitGraphSection>(Analyses.WaitGraph, "waitGraph")
{
    protected override WaitGraphSection Build(WaitForGraphAnalyzer g, ReportContext context) =>
        WaitGraphSectionBuilder.Build(g.Result, context.Tids, context.Names);

    protected override IReadOnlyList<ReportBlock> View(WaitGraphSection g)
    {
        var title = $"Wait-for graph: what the process waited on ({Units.Ms(g.WaitNs)} ms of waiting, cascaded)";
        var waitedOn = new ReportTable(title,
        [
            new("waited on", CellAlign.Left, TerminalAlign: CellAlign.Right), new("ms"), new("share"),
        ])
        { RowNoun = "waited-on threads and objects" };
        foreach (var v in g.WaitedOn)
            waitedOn.Add(v.Name, Units.Ms(v.WeightNs), new(Format.Pct(v.Share), Format.P1(v.Share)));

        var unattributed = Unattributed(g);
        List<string> knots = [];
        if (g.Knots.Count == 0) knots.Add($"No knot (edges of at least {Units.Us(g.KnotMinEdgeWeightNs)} µs).");
        foreach (var k in g.Knots)
        {
            knots.Add($"- Knot{(k.IsSink ? " (sink)" : "")}: {string.Join(", ", k.Names)} — " +
                $"{Units.Ms(k.InternalWeightNs)} ms of waits among them ({Format.Pct(k.ShareOfWait)} of the " +
                "process's wait time)");
        }
        knots.Add("");

        var edges = new ReportTable("Wait edges", [new("from"), Column.Left("to"), new("ms"), new("waits")])
        {
            RowNoun = "edges",
            In = Shown.Markdown,
        };
        foreach (var e in g.Edges) edges.Add(Format.Int(e.From), e.ToName, Units.Ms(e.WeightNs), Units.N(e.Count));

        return
        [
            new MarkdownText("## Wait-for graph", "",
                $"The process's threads waited {Units.Ms(g.WaitNs)} ms in all; cascaded (wPerf) attribution of " +
                "that time:", ""),
            new TableBlock(waitedOn),
            new MarkdownText(unattributed, ""),
            new TerminalLine("[grey]" + Format.Escape(unattributed) + "[/]"),
            new MarkdownText([.. knots]),
            new TableBlock(edges),
            .. g.Knots.Select(KnotLine),
        ];
    }

    /// <summary>How much of the waiting stays unattributed, and why (docs/metrics.md#wait-for-graph).</summary>
    private static string Unattributed(WaitGraphSection g) =>
        $"Not attributed: {Units.Ms(g.UnknownNs)} ms unknown ({Units.Ms(g.OpenAtEndNs)} ms still blocked when the " +
        "trace ended; the rest had no wakeup logged, directly or through the waker's own wait), " +
        $"{Units.Ms(g.KernelIrqNs)} ms kernel/irq (an interrupt woke a wait whose syscall was not recorded or does " +
        "not tell timer, disk and network apart).";

    private static TerminalLine KnotLine(WaitKnotSection k) =>
        new($"[bold]Knot[/]{(k.IsSink ? " (sink: the bottleneck is inside)" : "")}: " +
            $"{Format.Escape(string.Join(", ", k.Names))} — {Units.Ms(k.InternalWeightNs)} ms of waits among them, " +
            $"{Format.P1(k.ShareOfWait)} of the process's wait time");
}
