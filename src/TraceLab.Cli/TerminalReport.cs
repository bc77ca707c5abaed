using Spectre.Console;
using TraceLab.Reporting;

namespace TraceLab.Cli;

/// <summary>The report on the terminal: the capture summary, then each analysis's section.</summary>
public static class TerminalReport
{
    public static void Render(IAnsiConsole console, RunReport r)
    {
        foreach (var analysis in AnalysisReports.All.Where(a => a.OpensReport))
            if (analysis.View(r) is { } blocks) TerminalSections.Write(console, blocks);
        var c = r.Capture;
        console.MarkupLine($"[bold]Capture[/] {Markup.Escape(c.Backend)}: {c.Events:N0} events ({c.SwitchEvents:N0} switches) on {c.Cpus} CPUs, " +
            $"lost [{(c.LostEvents > 0 ? "red" : "green")}]{c.LostEvents:N0}[/], broken switch chains repaired {c.ChainBreaks:N0}" +
            (c.Partial ? " [red]PARTIAL[/]" : ""));
        console.MarkupLine($"[bold]Region[/] {r.Region.Source}: {r.Region.DurationNs / 1e9:0.000} s");
        if (r.Process is { } p)
        {
            console.MarkupLine($"[bold]Process[/] {p.Pid} {Markup.Escape(p.Name ?? "")}: " +
                $"Real {Sec(p.RealNs)}  User {Sec(p.UserNs)}  System {Sec(p.SystemNs)}  (workload's clock and getrusage)  " +
                $"traced run {p.TracedRunNs / 1e9:0.000} s, {p.VoluntarySwitches:N0} voluntary / {p.InvoluntarySwitches:N0} involuntary switches");
            if (p.WorkloadMetrics is { } m)
                console.MarkupLine($"[bold]Workload[/] {Markup.Escape(WorkloadMetricsText.Format(m))}");
        }

        foreach (var analysis in AnalysisReports.All.Where(a => !a.OpensReport))
            if (analysis.View(r) is { } blocks) TerminalSections.Write(console, blocks);
        foreach (var warning in r.Warnings) console.MarkupLine($"[yellow]warning:[/] {Markup.Escape(warning)}");
    }

    private static string Sec(long? ns) => ns is null ? "—" : $"{ns.Value / 1e9:0.000} s";
}
