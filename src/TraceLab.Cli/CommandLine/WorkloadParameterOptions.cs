using System.CommandLine;
using TraceLab.Workloads;

namespace TraceLab.Cli.CommandLine;

/// <summary>
/// One <c>--NAME</c> option per workload parameter in the catalog (--threads, --iterations, ...), read back as the
/// overrides the workload validates (so their errors name the parameter's range).
/// </summary>
internal sealed class WorkloadParameterOptions
{
    private readonly List<(string Name, Option<string?> Option)> _options;

    /// <param name="descriptionPrefix">Put before each parameter's own description (e.g. "fixed for every point: ").</param>
    public WorkloadParameterOptions(string descriptionPrefix = "") =>
        _options = WorkloadCatalog.All.SelectMany(w => w.Parameters).DistinctBy(p => p.Name)
            .Select(p => (p.Name, new Option<string?>($"--{p.Name}") { Description = descriptionPrefix + p.Description }))
            .ToList();

    /// <summary>
    /// Adds the options, except those whose name the command already uses for its own option (throttle's
    /// --repeat against sweep's and overhead's --repeat): the command's own meaning wins, as it did when both were
    /// added and the parser matched the first.
    /// </summary>
    public void AddTo(Command command)
    {
        _options.RemoveAll(p => command.Options.Any(o => o.Name == p.Option.Name));
        foreach (var (_, option) in _options) command.Options.Add(option);
    }

    /// <summary>The parameters given on the command line, by name (any case).</summary>
    public IReadOnlyDictionary<string, string> Overrides(ParseResult result) =>
        _options.Where(p => result.GetValue(p.Option) is not null)
            .ToDictionary(p => p.Name, p => result.GetValue(p.Option)!, StringComparer.OrdinalIgnoreCase);
}
