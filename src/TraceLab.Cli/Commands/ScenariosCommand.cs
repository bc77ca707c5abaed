using System.CommandLine;
using Spectre.Console;
using TraceLab.Cli.CommandLine;
using TraceLab.Workloads;

namespace TraceLab.Cli.Commands;

/// <summary>`tracelab scenarios`: every workload and scenario, with the seed claims each one tests.</summary>
public sealed class ScenariosCommand(IAnsiConsole console)
{
    private readonly IAnsiConsole _console = console;

    public static Command Create(IAnsiConsole console)
    {
        var command = new Command("scenarios", "list workloads and their scenarios with the seed claims they test");
        CommandActions.Set(command, _ => new ScenariosCommand(console).Run());
        return command;
    }

    public int Run()
    {
        foreach (var w in WorkloadCatalog.All)
        {
            _console.MarkupLine($"[bold]{w.Name}[/] (seed {w.Seed}): {Markup.Escape(w.Description)}");
            var table =
                new Table().Border(TableBorder.Simple).AddColumns("scenario", "claims", "description", "parameters");
            foreach (var s in w.Scenarios)
                table.AddRow(s.Name, string.Join(",", s.Claims), Markup.Escape(s.Description),
                    Markup.Escape(string.Join(" ", s.Parameters.Select(kv => $"--{kv.Key} {kv.Value}"))));
            _console.Write(table);
            _console.MarkupLine("  parameters (each is also an option of `tracelab trace`):");
            foreach (var p in w.Parameters)
            {
                var value = p.DefaultText ?? p.Default.ToString(System.Globalization.CultureInfo.InvariantCulture);
                _console.MarkupLine($"    --{p.Name,-13} {Markup.Escape(p.Description)} [grey](default "
                    + $"{Markup.Escape(value)})[/]");
            }
        }
        return ExitCodes.Ok;
    }
}
