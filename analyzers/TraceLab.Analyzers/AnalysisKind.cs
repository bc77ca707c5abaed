namespace TraceLab.Analyzers;

/// <summary>
/// The analyses `tracelab analyze --analysis` can select, one flag per <see cref="Analyses.All"/> entry; each is a
/// section of the report.
/// </summary>
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
    /// <summary>Ranked findings (docs/metrics.md, "Findings"): its evidence collector in the pass, rules over the report after it.</summary>
    Findings = 64,
    All = Threads | Kernel | Convoys | Wakeups | Smp | WaitGraph | Findings,
}

/// <summary>`--analysis` names (from <see cref="Analyses.All"/>) to flags and back.</summary>
public static class AnalysisKinds
{
    /// <summary>Every analysis's name, then "all".</summary>
    public static readonly IReadOnlyDictionary<string, AnalysisKind> Names = BuildNames();

    /// <summary>"threads, kernel, …": for help texts.</summary>
    public static string NameList => string.Join(", ", Analyses.All.Select(a => a.Name));

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
        if (kinds == AnalysisKind.None)
            throw new ArgumentException($"no analysis selected: use {string.Join(", ", Names.Keys)}");
        return kinds;
    }

    public static IEnumerable<string> Format(AnalysisKind kinds) => Analyses.Selected(kinds).Select(a => a.Name);

    private static Dictionary<string, AnalysisKind> BuildNames()
    {
        var names = new Dictionary<string, AnalysisKind>(StringComparer.OrdinalIgnoreCase);
        var all = AnalysisKind.None;
        foreach (var a in Analyses.All)
        {
            names.Add(a.Name, a.Kind);
            all |= a.Kind;
        }
        names.Add("all", all);
        return names;
    }
}
