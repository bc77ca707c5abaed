using Spectre.Console;
using TraceLab.Reporting;

namespace TraceLab.Cli;

/// <summary>
/// The processes of a `trace -- / --pid / --system` run on the terminal: the target processes and the "rest of the
/// system" line; for --system the top ranked processes with their threads (report.json keeps them all).
/// </summary>
public static class ProcessesTerminal
{
    public const int TopProcesses = 10;

    public static void Render(IAnsiConsole console, RunReport report, bool system)
    {
        // Without a target the report itself opens with the ranked processes (SystemOverview).
        if (report.System is not null) return;
        var shown = system
            ? report.Processes.Take(TopProcesses).ToList()
            : report.Processes.Where(p => p.Target).ToList();
        if (shown.Count == 0) return;
        var table = new Table
        {
            Title = new TableTitle(system
            ? $"Processes: top {shown.Count} of {report.Processes.Count} (lock-queue wait, then ready time)"
            : "Traced processes")
        };
        foreach (var c in new[] { "pid", "name", "parent", "threads", "run ms", "ready ms", "wait ms", "lock wait ms" })
            table.AddColumn(new TableColumn(c) { Alignment = c is "name" ? Justify.Left : Justify.Right });
        foreach (var p in shown)
            table.AddRow(p.Pid.ToString(), Markup.Escape(p.Name), p.ParentPid?.ToString() ?? "",
                p.ThreadCount.ToString(),
                Ms(p.RunNs), Ms(p.ReadyNs), Ms(p.WaitNs), Ms(p.LockWaitNs));
        if (report.RestOfSystem is { } rest)
            table.AddRow("", "[grey]rest of the system[/]", "", $"[grey]{rest.Threads}[/]",
                $"[grey]{Ms(rest.RunNs)}[/]",
                $"[grey]{Ms(rest.ReadyNs)}[/]", $"[grey]{Ms(rest.WaitNs)}[/]", "");
        console.Write(table);
        foreach (var left in SelfExclusion.Lines(report)) console.MarkupLine($"[grey]{Markup.Escape(left)}[/]");
        if (!system) return;
        var top = shown.Select(p => p.Pid).ToHashSet();
        var threads = new Table { Title = new TableTitle("Their threads") };
        foreach (var c in new[] { "pid", "tid", "name", "run ms", "ready ms", "wait ms" })
            threads.AddColumn(new TableColumn(c) { Alignment = c is "name" ? Justify.Left : Justify.Right });
        var ordered = report.Threads.Where(t => top.Contains(t.Pid))
            .OrderBy(t => shown.FindIndex(p => p.Pid == t.Pid)).ThenBy(t => t.Tid);
        foreach (var t in ordered)
            threads.AddRow(t.Pid.ToString(), t.Tid.ToString(), Markup.Escape(t.Name), Ms(t.RunNs), Ms(t.ReadyNs),
                Ms(t.WaitNs));
        console.Write(threads);
    }

    private static string Ms(long ns) => (ns / 1e6).ToString("0.0", System.Globalization.CultureInfo.InvariantCulture);
}
