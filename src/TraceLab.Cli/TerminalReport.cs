using Spectre.Console;
using TraceLab.Reporting;

namespace TraceLab.Cli;

/// <summary>The per-thread table and the capture summary, on the terminal.</summary>
public static class TerminalReport
{
    public static void Render(IAnsiConsole console, RunReport r)
    {
        if (r.Findings is { } findings) TerminalFindings.Render(console, findings);
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

        if (r.Analyses.Count == 0 || r.Analyses.Contains("threads")) RenderThreads(console, r);
        if (r.Kernel is { } k) TerminalSections.Kernel(console, k);
        if (r.Convoys is { } cv) TerminalSections.Convoys(console, cv);
        if (r.Wakeups is { } w) TerminalSections.Wakeups(console, w);
        if (r.Smp is { } smp) TerminalSections.Smp(console, smp);
        if (r.WaitGraph is { } g) TerminalSections.WaitGraph(console, g);
        foreach (var warning in r.Warnings) console.MarkupLine($"[yellow]warning:[/] {Markup.Escape(warning)}");
    }

    private static void RenderThreads(IAnsiConsole console, RunReport r)
    {
        var table = new Table().Border(TableBorder.Rounded).Title("[bold]Threads[/]");
        foreach (var h in new[] { "tid", "name", "run ms", "ready ms", "wait ms", "vol", "invol", "migr", "wk recv", "wk given", "rdy p50 µs", "p99 µs", "max µs", "top waker", "user ms*", "sys ms*" })
            table.AddColumn(new TableColumn(h) { Alignment = h is "name" or "top waker" ? Justify.Left : Justify.Right });
        foreach (var t in r.Threads)
        {
            var top = t.TopWakers.FirstOrDefault();
            table.AddRow(
                t.Tid.ToString(), Markup.Escape(t.Name + (t.Role is null ? "" : $" ({t.Role})")),
                Ms(t.RunNs), Ms(t.ReadyNs), Ms(t.WaitNs),
                t.VoluntarySwitches.ToString("N0"), t.InvoluntarySwitches.ToString("N0"), t.Migrations.ToString("N0"),
                t.WakeupsReceived.ToString("N0"), t.WakeupsGiven.ToString("N0"),
                Us(t.ReadyLatency.P50Ns), Us(t.ReadyLatency.P99Ns), Us(t.ReadyLatency.MaxNs),
                top is null ? "" : Markup.Escape($"{top.Name} ({top.Tid}) ×{top.Count:N0}"),
                t.Workload is null ? "" : Ms(t.Workload.UserNs), t.Workload is null ? "" : Ms(t.Workload.SystemNs));
        }
        console.Write(table);
        console.MarkupLine("[grey]* user/sys: the workload's own getrusage(RUSAGE_THREAD). Definitions: docs/metrics.md[/]");
    }

    private static string Ms(long ns) => (ns / 1e6).ToString("0.0");
    private static string Us(long ns) => (ns / 1e3).ToString("0.0");
    private static string Sec(long? ns) => ns is null ? "—" : $"{ns.Value / 1e9:0.000} s";
}
