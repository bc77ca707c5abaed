using Spectre.Console;
using TraceLab.Reporting.Findings;

namespace TraceLab.Cli;

/// <summary>The ranked findings, first thing on the terminal (docs/metrics.md, "Findings").</summary>
public static class TerminalFindings
{
    public static void Render(IAnsiConsole console, IReadOnlyList<FindingSection> findings)
    {
        if (findings.Count == 0)
        {
            console.MarkupLine($"[bold]Findings[/] [green]no findings above the floor[/] ({Markup.Escape(FindingsMarkdown.FloorText)})");
            return;
        }
        console.MarkupLine($"[bold]Findings[/] ranked by the share of the reported threads' time each explains (docs/metrics.md, Findings)");
        for (var i = 0; i < findings.Count; i++)
        {
            var f = findings[i];
            console.MarkupLine($"[bold red]{i + 1}. {Markup.Escape(FindingsMarkdown.Percent(f.Severity))}[/] [bold]{Markup.Escape(f.Title)}[/] [grey]({Markup.Escape(f.Kind)})[/]");
            console.MarkupLine($"   [grey]evidence:[/] {Markup.Escape(string.Join("; ", f.Evidence.Select(e => $"{e.Metric} = {FindingsMarkdown.Value(e.Value)}")))}");
            if (f.Windows.Count > 0)
                console.MarkupLine($"   [grey]worst windows (--timeline-window):[/] {Markup.Escape(string.Join(", ", f.Windows))}");
            console.MarkupLine($"   [grey]remedy:[/] {Markup.Escape(f.Remedy)} [grey]({Markup.Escape(string.Join(", ", f.Claims))})[/]");
        }
    }
}
