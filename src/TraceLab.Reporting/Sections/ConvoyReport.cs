using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Waits;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Sections;

/// <summary>The "convoys" analysis in the report: lock objects, handoffs and convoy episodes.</summary>
public sealed class ConvoyReport() : AnalysisReport<ConvoyAnalyzer, ConvoySection>(Analyses.Convoys, "convoys")
{
    /// <summary>Lock objects the terminal lists (report.md lists all).</summary>
    private const int TerminalObjects = 8;

    protected override ConvoySection Build(ConvoyAnalyzer c, ReportContext context) =>
        ConvoySectionBuilder.Build(c, context.Tids, context.Names, context.RegionNs,
            context.Session.AnalyzerOf(WaitClassAnalyzer.Analysis) is WaitClassAnalyzer w ? w.IsNotALock : null);

    protected override IEnumerable<string> Warnings(ConvoyAnalyzer c) => c.SawLockSyscalls
        ? []
        : ["no lock syscalls in the trace: lock objects are inferred from wakeups between threads of one process " +
            "(docs/metrics.md, \"Lock objects\")"];

    protected override IReadOnlyList<ReportBlock> View(ConvoySection c)
    {
        List<string> intro =
        [
            "## Lock convoys", "",
            $"Objects named by {(c.ObjectSource == "syscalls" ? "the syscalls that wait on them" : Inferred)}; " +
                $"an episode is a chain of at least {c.MinEpisodeHandoffs} handoffs in which each giver is the " +
                "previous receiver.",
        ];
        if (c.EventObjects is { } events)
        {
            intro.Add($"{Units.N(events)} objects whose waits were mostly not lock waits (condition, timed out; " +
                "docs/metrics.md#wait-classes) are left out.");
        }
        if (c.UnconfirmedHandoffs > 0)
            intro.Add($"{Units.N(c.UnconfirmedHandoffs)} futex handoffs were still unconfirmed when the trace ended.");
        intro.Add("");
        if (c.Objects.Count == 0)
        {
            return
            [
                new MarkdownText([.. intro, "No thread of the process waited on a lock object.", ""]),
                new TerminalLine("[bold]Lock convoys[/] none: no thread of the process waited on a lock object " +
                    $"({c.ObjectSource})"),
            ];
        }

        var title = $"Lock objects ({c.ObjectSource}; episode = ≥{c.MinEpisodeHandoffs} chained handoffs)";
        var objects = new ReportTable(title,
        [
            Column.Left("object"), new("handoffs"), new("handoffs/s", TerminalHeading: "/s"),
            Column.MarkdownOnly("acquisitions"), new("handoff share", TerminalHeading: "share"),
            Column.MarkdownOnly("fast acquisitions"), new("blocking waits", TerminalHeading: "blocking"),
                new("lost races"), new("episodes"), Column.MarkdownOnly("handoffs in convoys"),
            Column.MarkdownOnly("convoy ms"), new("convoy % of region", TerminalHeading: "convoy %"),
            new("longest chain", TerminalHeading: "longest"), new("gap p50 µs"),
            new("gap p99 µs", TerminalHeading: "p99 µs"), Column.MarkdownOnly("queue wait p50 µs"),
            new("participants", CellAlign.Left, TerminalAlign: CellAlign.Right),
        ])
        { TerminalRowLimit = TerminalObjects, RowNoun = "lock objects" };
        foreach (var o in c.Objects)
        {
            objects.Add(o.Object, Units.N(o.Handoffs),
                new(o.HandoffsPerSecond.ToString("0", Inv), o.HandoffsPerSecond.ToString("N0", Inv)),
                o.Acquisitions is { } a ? Units.N(a) : "n/a",
                new(Format.Pct(o.HandoffShare), o.HandoffShare is { } s ? Format.P1(s) : "n/a"),
                Units.N(o.FastAcquisitions), Units.N(o.BlockingWaits), Units.N(o.LostRaces), Units.N(o.Episodes),
                Units.N(o.HandoffsInConvoys), Units.Ms(o.ConvoyNs),
                new(Format.Pct(o.ConvoyShareOfRegion), Format.P1(o.ConvoyShareOfRegion)), Units.N(o.LongestChain),
                Units.Us(o.HandoffGap.P50Ns), Units.Us(o.HandoffGap.P99Ns), Units.Us(o.QueueWait.P50Ns),
                new(string.Join(", ", o.Participants), Format.Int(o.Participants.Count)));
        }

        var threads = new ReportTable("Per-thread convoy report",
        [
            new("tid"), Column.Left("name"), new("time in convoy ms", TerminalHeading: "in convoy ms"),
            new("handoffs received", TerminalHeading: "handoffs recv"), Column.MarkdownOnly("in convoys"),
            new("handoffs given", TerminalHeading: "given"), new("lost races"),
            new("queue wait p50 µs", TerminalHeading: "queue p50 µs"),
            new("ready p50 µs"), new("ready p99 µs", TerminalHeading: "p99 µs"),
            Column.Left("received most from"), Column.Left("handed most to"),
        ])
        { RowNoun = "threads" };
        threads.AddThreadRows(c.Threads, t => t.Tid, t =>
        [
            Format.Tid(t.Tid), t.Name, Units.Ms(t.TimeInConvoyNs), Units.N(t.HandoffsReceived),
            Units.N(t.HandoffsReceivedInConvoys), Units.N(t.HandoffsGiven), Units.N(t.LostRaces),
            Units.Us(t.QueueWait.P50Ns), Units.Us(t.ReadyLatency.P50Ns), Units.Us(t.ReadyLatency.P99Ns),
            Partners(t.ReceivedFrom), Partners(t.GivenTo),
        ]);

        return
        [
            new MarkdownText([.. intro]),
            new TableBlock(objects),
            new MarkdownText("### Per-thread convoy report", ""),
            new TableBlock(threads),
        ];
    }

    private const string Inferred = "inference (no lock syscalls in the trace)";

    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    /// <summary>All partners in report.md; the first (the most) on the terminal, to stay within 160 columns.</summary>
    private static Cell Partners(List<WakerSection> list) => new(
        string.Join(", ", list.Select(p => $"{Format.Tid(p.Tid)} ×{Units.N(p.Count)}")),
        list.Count <= 1 ? null : $"{Format.Tid(list[0].Tid)} ×{Units.N(list[0].Count)} …");
}
