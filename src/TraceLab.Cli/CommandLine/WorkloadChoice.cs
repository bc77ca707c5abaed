using TraceLab.Workloads;

namespace TraceLab.Cli.CommandLine;

/// <summary>A workload, one of its scenarios and the parameter values they give with the user's overrides.</summary>
internal sealed record WorkloadChoice(WorkloadDefinition Workload, Scenario Scenario,
    IReadOnlyDictionary<string, string> Values)
{
    /// <summary>
    /// Finds the workload and scenario by name and validates the values; a bad name or value is a
    /// <see cref="UsageException"/> listing what is valid (one line, exit 2).
    /// </summary>
    public static WorkloadChoice Resolve(
        string workload, string scenario, IReadOnlyDictionary<string, string> overrides)
    {
        var w = WorkloadCatalog.Find(workload)
            ?? throw new UsageException($"unknown workload '{workload}': valid workloads are " +
                string.Join(", ", WorkloadCatalog.All.Select(x => x.Name)));
        var sc = w.FindScenario(scenario)
            ?? throw new UsageException($"unknown scenario '{scenario}' for {w.Name}: valid scenarios are " +
                string.Join(", ", w.Scenarios.Select(x => x.Name)));
        try
        {
            return new WorkloadChoice(w, sc, w.Resolve(sc, overrides));
        }
        catch (WorkloadException ex)
        {
            throw new UsageException(ex.Message, ex);
        }
    }
}
