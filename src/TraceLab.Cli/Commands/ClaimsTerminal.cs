using Spectre.Console;
using TraceLab.Sweeps.Claims;

namespace TraceLab.Cli.Commands;

/// <summary>The claims report on the terminal: header, a row per claim, what cannot be decided, key figures.</summary>
public sealed class ClaimsTerminal(IAnsiConsole console)
{
    private readonly IAnsiConsole _console = console;

    public void Render(ClaimsReport r, DateTimeOffset written)
    {
        _console.MarkupLine("[bold]Seed claims: verdicts measured on this machine[/] [grey](docs/claims.md)[/]");
        foreach (var line in ClaimsReportMarkdown.Header(r, written))
            _console.MarkupLine(Markup.Escape("  " + line.Replace("`", "")));

        var table = new Table().Border(TableBorder.Simple)
            .AddColumns("claim", "verdict", "sweep", "runs ok/planned", "decidable here");
        foreach (var c in r.Claims)
        {
            var s = c.Sweep;
            table.AddRow(Markup.Escape(c.Claim.Id), $"[{Color(c.Outcome)}]{Markup.Escape(c.Outcome)}[/]",
                Markup.Escape($"{s.Definition.Workload} {s.Definition.Name}"),
                Markup.Escape(s.Measured
                    ? ClaimsCommand.I($"{s.RunsOk}/{s.RunsPlanned}{(s.Complete ? "" : " (incomplete)")}")
                    : "–"),
                Markup.Escape(c.Decision));
        }
        _console.Write(table);

        var undecidable = r.Claims.Where(c => !c.Decidable).ToList();
        if (undecidable.Count > 0)
        {
            _console.MarkupLine("[bold]Cannot be decided on this machine[/]");
            foreach (var c in undecidable)
            {
                var larger = c.Claim.LargerMachine is { } l ? $" A larger machine would have to show: {l}" : "";
                _console.MarkupLine(Markup.Escape($"  {c.Claim.Id}: {c.Why}.{larger}"));
            }
        }

        _console.MarkupLine(
            "[bold]Figures[/] [grey](first line of each aspect's evidence; all of them in claims.md)[/]");
        foreach (var c in r.Claims.Where(c => c.Aspects.Count > 0))
            foreach (var a in c.Aspects)
                _console.MarkupLine($"  {Markup.Escape(c.Claim.Id)} {Markup.Escape(a.Aspect)}: "
                    + $"[{Color(a.OutcomeText)}]{Markup.Escape(a.OutcomeText)}[/]"
                    + (a.Evidence.Count > 0 ? $" [grey]— {Markup.Escape(a.Evidence[0])}[/]" : ""));
    }

    private static string Color(string outcome) => outcome switch
    {
        "reproduced" => "green",
        "inverted" => "red",
        "not reproduced" => "yellow",
        _ => "grey",
    };
}
