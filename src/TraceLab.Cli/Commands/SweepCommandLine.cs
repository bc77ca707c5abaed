using System.CommandLine;
using Spectre.Console;
using TraceLab.Workloads;

namespace TraceLab.Cli.Commands;

/// <summary>The `sweep` and `sweeps` commands' options (kept out of Program.cs so other commands' edits do not collide).</summary>
internal static class SweepCommandLine
{
    public static Command Sweep(IAnsiConsole console)
    {
        var workload = new Argument<string?>("workload") { Description = "workload to sweep (see `tracelab scenarios`)", Arity = ArgumentArity.ZeroOrOne };
        var sweep = new Argument<string?>("sweep") { Description = "predefined sweep name or claim id (see `tracelab sweeps`)", Arity = ArgumentArity.ZeroOrOne };
        var param = new Option<string?>("--param") { Description = "parameter to sweep (x axis) for an ad-hoc sweep" };
        var values = new Option<string?>("--values") { Description = "its values, comma-separated; integer ranges like 1-8 expand" };
        var series = new Option<string?>("--series") { Description = "parameter that makes one series (plot line) per value, e.g. which" };
        var seriesValues = new Option<string?>("--series-values") { Description = "its values, comma-separated (e.g. cs,mutex)" };
        var repeat = new Option<int>("--repeat") { Description = "runs per point (verdicts need at least 3)", DefaultValueFactory = _ => 3 };
        var trace = new Option<bool>("--trace") { Description = "capture and analyze every run (trace.dat and report.json per run; needs root)" };
        var outDir = new Option<string?>("--out") { Description = "output directory (default: ./traces/sweep-WORKLOAD-SWEEP-TIME)" };
        var force = new Option<bool>("--force") { Description = "write into an existing non-empty directory" };
        var resume = new Option<string?>("--resume") { Description = "continue the interrupted sweep in this directory (its state.json)" };
        var timeout = new Option<int>("--timeout") { Description = "kill a run after this many seconds and record it as failed (0 = no limit)" };
        var seed = new Option<int?>("--order-seed") { Description = "seed of the interleaved run order (default: random, recorded in sweep.json)" };
        var list = new Option<bool>("--list") { Description = "list the predefined sweeps and their claims" };
        var parameters = WorkloadCatalog.All.SelectMany(w => w.Parameters).DistinctBy(p => p.Name)
            .Select(p => (p.Name, Option: new Option<string?>($"--{p.Name}") { Description = "fixed for every point: " + p.Description })).ToList();

        var cmd = new Command("sweep", "run a workload over a range of parameter values, repeated, with plots, report and claim verdicts")
        {
            workload, sweep, param, values, series, seriesValues, repeat, trace, outDir, force, resume, timeout, seed, list,
        };
        foreach (var (_, o) in parameters) cmd.Options.Add(o);
        cmd.SetAction((r, _) => CommandLine.Guard(async () =>
        {
            if (r.GetValue(list)) return new SweepsCommand(console).Run();
            if (r.GetValue(timeout) < 0) throw new UsageException("--timeout must be 0 or more seconds");
            var overrides = parameters.Where(p => r.GetValue(p.Option) is not null)
                .ToDictionary(p => p.Name, p => r.GetValue(p.Option)!, StringComparer.OrdinalIgnoreCase);
            return await new SweepCommand(console).RunAsync(new SweepCommand.Settings(
                r.GetValue(workload), r.GetValue(sweep), r.GetValue(param), r.GetValue(values), r.GetValue(series), r.GetValue(seriesValues),
                r.GetValue(repeat), r.GetValue(trace), r.GetValue(outDir), r.GetValue(force), r.GetValue(resume), overrides,
                r.GetValue(timeout), r.GetValue(seed)));
        }));
        return cmd;
    }

    public static Command Sweeps(IAnsiConsole console)
    {
        var cmd = new Command("sweeps", "list the predefined sweeps with the seed claims each one judges");
        cmd.SetAction((_, _) => CommandLine.Guard(() => Task.FromResult(new SweepsCommand(console).Run())));
        return cmd;
    }
}
