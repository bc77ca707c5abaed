using Spectre.Console;
using TraceLab.Reporting;
using TraceLab.Reporting.Stacks;
using TraceLab.Reporting.Tables;

namespace TraceLab.Cli;

/// <summary>The report on the terminal: the capture summary, then each analysis's section.</summary>
public static class TerminalReport
{
    /// <summary>
    /// Rows of each table on the terminal: the highest-ranked (<see cref="ThreadRanking"/>); report.md has them all.
    /// </summary>
    public const int TableRows = 10;

    public static void Render(IAnsiConsole console, RunReport r)
    {
        var ranking = ThreadRanking.Of(r);
        var limit = new RowLimit(TableRows, (left, table) => $"… {left:N0} more {table.RowNoun} in report.md",
            ranking);
        // A failed program first: every figure below is of a run cut short.
        if (ProgramExit.Describe(r) is { } exit) console.MarkupLine($"[red]Failed:[/] {Markup.Escape(exit)}");
        // The opening sections (the findings) come first, their lines fitted to the terminal's columns.
        foreach (var analysis in AnalysisReports.All.Where(a => a.OpensReport))
            if (analysis.View(r) is { } blocks) TerminalSections.Write(console, blocks, limit, fitLines: true);
        var c = r.Capture;
        console.MarkupLine($"[bold]Capture[/] {Markup.Escape(c.Backend)}: {c.Events:N0} events ({c.SwitchEvents:N0} "
            + $"switches) on {c.Cpus} CPUs, " +
            $"lost [{(c.LostEvents > 0 ? "red" : "green")}]{c.LostEvents:N0}[/], broken switch chains repaired "
                + $"{c.ChainBreaks:N0}" +
            (c.Partial ? " [red]PARTIAL[/]" : ""));
        console.MarkupLine($"[bold]Region[/] {r.Region.Source}: {r.Region.DurationNs / 1e9:0.000} s");
        if (r.Process is { } p)
        {
            // A process TraceLab attached to (--pid) has no clock or getrusage of TraceLab's or its own.
            var measured = p.RealNs is not null || p.UserNs is not null || p.SystemNs is not null;
            console.MarkupLine($"[bold]Process[/] {p.Pid} {Markup.Escape(p.Name ?? "")}: " +
                (!measured ? ""
                    : $"Real {Sec(p.RealNs)}  User {Sec(p.UserNs)}  System {Sec(p.SystemNs)}  " +
                      (r.Run?.ElapsedNs is null
                          ? "(workload's clock and getrusage)  "
                          : "(start to exit; getrusage of its tree)  ")) +
                $"traced run {p.TracedRunNs / 1e9:0.000} s, {p.VoluntarySwitches:N0} voluntary / "
                    + $"{p.InvoluntarySwitches:N0} involuntary switches");
            if (p.WorkloadMetrics is { } m)
                console.MarkupLine($"[bold]Workload[/] {Markup.Escape(WorkloadMetricsText.Format(m))}");
        }

        // Without a target: the system overview and the top processes; the sections then show their threads only.
        if (SystemOverview.View(r, ranking) is { } overview)
        {
            TerminalSections.Write(console, overview, limit);
            var detailed = SystemOverview.DetailedTids(r);
            limit = limit with
            {
                ThreadFilter = detailed.Contains,
                MoreNote = (left, table) =>
                    $"… {left:N0} more {table.RowNoun} (report.md: the top processes' threads; report.json: all)",
            };
        }
        foreach (var analysis in AnalysisReports.All.Where(a => !a.OpensReport))
            if (analysis.View(r) is { } blocks) TerminalSections.Write(console, blocks, limit);
        if (StacksView.View(r.Stacks) is { } stacks) TerminalSections.Write(console, stacks, limit);
        foreach (var warning in r.Warnings) console.MarkupLine($"[yellow]warning:[/] {Markup.Escape(warning)}");
    }

    private static string Sec(long? ns) => ns is null ? "—" : $"{ns.Value / 1e9:0.000} s";
}
