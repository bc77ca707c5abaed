using System.Text.Json.Serialization.Metadata;
using TraceLab.Analyzers;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Sections;

/// <summary>
/// The "threads" analysis: the scheduler accounting's per-thread table. Its data is report.json's "threads", which
/// every report has (the other analyses build on the accounting); the table shows when "threads" was selected.
/// </summary>
public sealed class ThreadsReport : IAnalysisReport
{
    public AnalysisDefinition Analysis => Analyses.Threads;
    public string? JsonName => null;
    public Type? SectionType => null;
    public JsonTypeInfo? SectionJson => null;

    /// <summary>The rows are RunReport.Threads, built by ReportBuilder for every report.</summary>
    public object? Build(ReportContext context) => null;

    public IReadOnlyList<ReportBlock>? View(RunReport report)
    {
        if (report.Analyses.Count != 0 && !report.Analyses.Contains(Analysis.Name)) return null;
        // A trace without the workload's getrusage figures (a whole system) has these columns empty: the terminal,
        // 160 columns wide at most, leaves them out.
        var rusage = report.Threads.Any(t => t.Workload is not null) ? Shown.Everywhere : Shown.Markdown;
        var table = new ReportTable("Threads",
        [
            new("tid"), Column.Left("name"), new("role", CellAlign.Left, In: Shown.Markdown),
            new("run ms"), new("ready ms"), new("wait ms"), new("vol"), new("invol"), new("migr"),
            // Too wide for the console: the ready maximum (p99 is there), wakeups given, then p50 leave first.
            new("wakeups recv", TerminalHeading: "wk recv"),
            new("wakeups given", TerminalHeading: "wk given", TerminalDropOrder: 2),
            new("ready p50 µs", TerminalHeading: "rdy p50 µs", TerminalDropOrder: 3), new("p99 µs"),
            new("max µs", TerminalDropOrder: 1),
            Column.Left("top wakers", "top waker"),
            new("user ms (rusage)", TerminalHeading: "user ms*", In: rusage),
            new("sys ms (rusage)", TerminalHeading: "sys ms*", In: rusage),
            Column.MarkdownOnly("iterations"),
        ])
        { RowNoun = "threads" };
        table.AddThreadRows(report.Threads, t => t.Tid, t =>
        {
            var top = t.TopWakers.FirstOrDefault();
            return
            [
                new(Format.Tid(t.Tid) + (t.MayBeAffectedByLoss == true ? " ⚠" : ""), Format.Tid(t.Tid)),
                new(t.Name, t.Name + (t.Role is null ? "" : $" ({t.Role})")),
                t.Role ?? "",
                Units.Ms(t.RunNs), Units.Ms(t.ReadyNs), Units.Ms(t.WaitNs),
                Units.N(t.VoluntarySwitches), Units.N(t.InvoluntarySwitches), Units.N(t.Migrations),
                Units.N(t.WakeupsReceived), Units.N(t.WakeupsGiven),
                Units.Us(t.ReadyLatency.P50Ns), Units.Us(t.ReadyLatency.P99Ns), Units.Us(t.ReadyLatency.MaxNs),
                new(string.Join("; ", t.TopWakers.Select(w => $"{w.Name}({Format.Tid(w.Tid)}) ×{Units.N(w.Count)}")),
                    top is null ? "" : $"{Short(top.Name)} ({Format.Tid(top.Tid)}) ×{Units.N(top.Count)}"),
                t.Workload is null ? "" : Units.Ms(t.Workload.UserNs),
                t.Workload is null ? "" : Units.Ms(t.Workload.SystemNs),
                t.Workload is null ? "" : Units.N(t.Workload.Iterations),
            ];
        });
        return
        [
            new MarkdownText("## Threads", ""),
            new TableBlock(table),
            new TerminalLine(rusage == Shown.Everywhere
                ? "[grey]* user/sys: the workload's own getrusage(RUSAGE_THREAD). Definitions: docs/metrics.md[/]"
                : "[grey]Definitions: docs/metrics.md[/]"),
        ];
    }

    /// <summary>A waker's name on the terminal, cut to keep the table within 160 columns.</summary>
    private static string Short(string name) => name.Length <= 13 ? name : name[..12] + "…";
}
