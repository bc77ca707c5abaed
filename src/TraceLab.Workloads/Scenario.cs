namespace TraceLab.Workloads;

/// <summary>A named set of parameter values that reproduces one experiment of a seed.</summary>
public sealed record Scenario(
    string Name, string Description, IReadOnlyList<string> Claims, IReadOnlyDictionary<string, string> Parameters);
