namespace TraceLab.Workloads;

/// <summary>A native workload: its parameters, scenarios and how parameter values become its command line.</summary>
public sealed class WorkloadDefinition
{
    public required string Name { get; init; }
    public required string Description { get; init; }
    public required string Seed { get; init; }
    public required IReadOnlyList<ParameterSpec> Parameters { get; init; }
    public required IReadOnlyList<Scenario> Scenarios { get; init; }

    /// <summary>Turns validated parameter values (every parameter present) into the program's arguments.</summary>
    public required Func<IReadOnlyDictionary<string, string>, IReadOnlyList<string>> Arguments { get; init; }

    /// <summary>Resolves values that depend on others (e.g. "all threads active"), after validation.</summary>
    public Action<Dictionary<string, string>>? Normalize { get; init; }

    /// <summary>
    /// Checks that involve several parameters (e.g. a product that must fit 64 bits), after normalization; throws
    /// <see cref="WorkloadException"/>.
    /// </summary>
    public Action<IReadOnlyDictionary<string, string>>? Validate { get; init; }

    public Scenario? FindScenario(string name) =>
        Scenarios.FirstOrDefault(s => string.Equals(s.Name, name, StringComparison.OrdinalIgnoreCase));

    public ParameterSpec? FindParameter(string name) =>
        Parameters.FirstOrDefault(p => string.Equals(p.Name, name, StringComparison.OrdinalIgnoreCase));

    /// <summary>Scenario values, then overrides, each validated; missing parameters take their defaults.</summary>
    public IReadOnlyDictionary<string, string> Resolve(Scenario scenario, IReadOnlyDictionary<string, string> overrides)
    {
        var values = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (var p in Parameters) values[p.Name] =
            p.DefaultText ?? p.Default.ToString(System.Globalization.CultureInfo.InvariantCulture);
        foreach (var (k, v) in scenario.Parameters) values[k] = v;
        foreach (var (k, v) in overrides)
        {
            if (FindParameter(k) is null) throw new WorkloadException($"{Name} has no parameter '{k}'");
            values[k] = v;
        }
        foreach (var p in Parameters) values[p.Name] = p.Validate(values[p.Name]);
        Normalize?.Invoke(values);
        Validate?.Invoke(values);
        return values;
    }
}
