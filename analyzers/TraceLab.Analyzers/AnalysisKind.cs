namespace TraceLab.Analyzers;

/// <summary>The analyses `tracelab analyze --analysis` can select; each is a section of the report.</summary>
[Flags]
public enum AnalysisKind
{
    None = 0,
    Threads = 1,
    Kernel = 2,
    Convoys = 4,
    Wakeups = 8,
    Smp = 16,
    WaitGraph = 32,
    /// <summary>Ranked findings (docs/metrics.md, "Findings"): a post-pass over the others plus its own evidence collector.</summary>
    Findings = 64,
    All = Threads | Kernel | Convoys | Wakeups | Smp | WaitGraph | Findings,
}

public static class AnalysisKinds
{
    public static readonly IReadOnlyDictionary<string, AnalysisKind> Names = new Dictionary<string, AnalysisKind>(StringComparer.OrdinalIgnoreCase)
    {
        ["threads"] = AnalysisKind.Threads,
        ["kernel"] = AnalysisKind.Kernel,
        ["convoys"] = AnalysisKind.Convoys,
        ["wakeups"] = AnalysisKind.Wakeups,
        ["smp"] = AnalysisKind.Smp,
        ["waitgraph"] = AnalysisKind.WaitGraph,
        ["findings"] = AnalysisKind.Findings,
        ["all"] = AnalysisKind.All,
    };

    /// <summary>Parses "threads,kernel,..."; throws <see cref="ArgumentException"/> naming the unknown entry.</summary>
    public static AnalysisKind Parse(string text)
    {
        var kinds = AnalysisKind.None;
        foreach (var part in text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!Names.TryGetValue(part, out var k))
                throw new ArgumentException($"unknown analysis '{part}': use {string.Join(", ", Names.Keys)}");
            kinds |= k;
        }
        if (kinds == AnalysisKind.None) throw new ArgumentException($"no analysis selected: use {string.Join(", ", Names.Keys)}");
        return kinds;
    }

    public static IEnumerable<string> Format(AnalysisKind kinds) =>
        Names.Where(kv => kv.Value != AnalysisKind.All && kinds.HasFlag(kv.Value)).Select(kv => kv.Key);
}
