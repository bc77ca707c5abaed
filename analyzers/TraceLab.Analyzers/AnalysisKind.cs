namespace TraceLab.Analyzers;

/// <summary>
/// A selection of analyses, as `tracelab analyze --analysis` makes it: one bit per <see cref="AnalysisDefinition"/>,
/// which takes its bit when it is made, so adding an analysis adds no member here. Combine with <c>|</c>, test with
/// <see cref="Includes"/> or <see cref="HasFlag"/>. <see cref="All"/> selects every analysis, whatever is registered.
/// </summary>
public readonly record struct AnalysisKind
{
    /// <summary>Bits, not analyses: a selection holds at most this many.</summary>
    public const int MaxAnalyses = 64;

    private readonly ulong _bits;

    private AnalysisKind(ulong bits) => _bits = bits;

    public static AnalysisKind None => default;

    /// <summary>Every analysis, those registered later included.</summary>
    public static AnalysisKind All => new(ulong.MaxValue);

    // Shortcuts for the built-in analyses (a new analysis needs none: its definition's Kind serves it).
    public static AnalysisKind Threads => Analyses.Threads.Kind;
    public static AnalysisKind Kernel => Analyses.Kernel.Kind;
    public static AnalysisKind Convoys => Analyses.Convoys.Kind;
    public static AnalysisKind Wakeups => Analyses.Wakeups.Kind;
    public static AnalysisKind Smp => Analyses.Smp.Kind;
    public static AnalysisKind WaitGraph => Analyses.WaitGraph.Kind;

    public bool IsNone => _bits == 0;

    /// <summary>Whether <paramref name="analysis"/> is selected.</summary>
    public bool Includes(AnalysisDefinition analysis) => (_bits & analysis.Kind._bits) != 0;

    /// <summary>
    /// Whether every analysis of <paramref name="kinds"/> is selected (as <see cref="Enum.HasFlag"/>).
    /// </summary>
    public bool HasFlag(AnalysisKind kinds) => (_bits & kinds._bits) == kinds._bits;

    public static AnalysisKind operator |(AnalysisKind a, AnalysisKind b) => new(a._bits | b._bits);
    public static AnalysisKind operator &(AnalysisKind a, AnalysisKind b) => new(a._bits & b._bits);
    public static AnalysisKind operator ~(AnalysisKind a) => new(~a._bits);

    internal static AnalysisKind Bit(int index) =>
        index < MaxAnalyses
            ? new(1UL << index)
            : throw new InvalidOperationException($"more than {MaxAnalyses} analyses defined");

    public override string ToString() =>
        this == All ? "all" : IsNone ? "none" : string.Join(",", Analyses.Selected(this).Select(a => a.Name));
}

/// <summary>`--analysis` names to selections.</summary>
public static class AnalysisKinds
{
    /// <summary>
    /// Parses "threads,kernel,..." against <paramref name="known"/> (default: every analysis defined so far), "all"
    /// included; throws <see cref="ArgumentException"/> naming the unknown entry and the known names.
    /// </summary>
    public static AnalysisKind Parse(string text, IEnumerable<AnalysisDefinition>? known = null)
    {
        var analyses = (known ?? Analyses.Defined).ToList();
        string Known() => string.Join(", ", analyses.Select(a => a.Name).Append("all"));
        var kinds = AnalysisKind.None;
        foreach (var part in text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (string.Equals(part, "all", StringComparison.OrdinalIgnoreCase))
            {
                kinds = AnalysisKind.All;
                continue;
            }
            var analysis = analyses.Find(a => string.Equals(a.Name, part, StringComparison.OrdinalIgnoreCase))
                ?? throw new ArgumentException($"unknown analysis '{part}': use {Known()}");
            kinds |= analysis.Kind;
        }
        if (kinds.IsNone) throw new ArgumentException($"no analysis selected: use {Known()}");
        return kinds;
    }
}
