using System.CommandLine;
using Spectre.Console;
using TraceLab.Cli.CommandLine;
using TraceLab.Sweeps;

namespace TraceLab.Cli.Commands;

/// <summary>`tracelab sweeps`: the predefined sweeps, what they vary and the claims they judge.</summary>
public sealed class SweepsCommand(IAnsiConsole console)
{
    private readonly IAnsiConsole _console = console;

    public static Command Create(IAnsiConsole console)
    {
        var command = new Command("sweeps", "list the predefined sweeps with the seed claims each one judges");
        CommandActions.Set(command, _ => new SweepsCommand(console).Run());
        return command;
    }

    public int Run()
    {
        var table = new Table().Border(TableBorder.Simple)
            .AddColumns("workload", "sweep", "claims", "what", "points", "series");
        foreach (var d in PredefinedSweeps.All)
        {
            var points = d.Series.Sum(s => d.XValues.Count(x => s.OnlyX is null || s.OnlyX.Contains(x)));
            table.AddRow(Markup.Escape(d.Workload), Markup.Escape(d.Name), Markup.Escape(string.Join(",", d.Claims)),
                Markup.Escape($"{d.Title}; {d.XParameter} = "
                    + $"{string.Join(",", d.XValues)}{(d.Notes is null ? "" : $" ({d.Notes})")}"),
                points.ToString(System.Globalization.CultureInfo.InvariantCulture),
                Markup.Escape(string.Join("; ", d.Series.Select(s => s.Label))));
        }
        _console.Write(table);
        _console.MarkupLine("Run one: [bold]tracelab sweep WORKLOAD SWEEP[/] [grey](--repeat N, --trace, --out DIR, "
            + "parameter overrides such as --iterations 20000 to make it smaller)[/]");
        return ExitCodes.Ok;
    }
}
