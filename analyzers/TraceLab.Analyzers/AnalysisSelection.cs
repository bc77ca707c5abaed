namespace TraceLab.Analyzers;

/// <summary>
/// A selection of analyses, as `tracelab analyze --analysis` makes it: one bit per analysis, its position in the
/// <see cref="AnalysisCatalog"/> that made the selection (<see cref="AnalysisCatalog.Of"/>). Combine with <c>|</c>,
/// test with <see cref="Includes"/> or <see cref="HasFlag"/>. The shortcuts below are the built-in catalog's
/// (<see cref="Analyses.Catalog"/>); a new analysis needs none.
/// </summary>
public readonly record struct AnalysisSelection
{
    /// <summary>Bits, not analyses: a catalog holds at most this many.</summary>
    public const int MaxAnalyses = 64;

    private readonly ulong _bits;

    private AnalysisSelection(ulong bits) => _bits = bits;

    public static AnalysisSelection None => default;

    /// <summary>
    /// Every analysis any catalog lists; a session narrows it to its catalog's, and to the timeline only when it is
    /// asked for one (<see cref="AnalysisDefinition.OnRequest"/>).
    /// </summary>
    public static AnalysisSelection All => new(ulong.MaxValue);

    // Shortcuts for the built-in catalog's analyses.
    public static AnalysisSelection Threads => Analyses.Catalog.Of(Analyses.Threads);
    public static AnalysisSelection Kernel => Analyses.Catalog.Of(Analyses.Kernel);
    public static AnalysisSelection Convoys => Analyses.Catalog.Of(Analyses.Convoys);
    public static AnalysisSelection Wakeups => Analyses.Catalog.Of(Analyses.Wakeups);
    public static AnalysisSelection Smp => Analyses.Catalog.Of(Analyses.Smp);
    public static AnalysisSelection WaitGraph => Analyses.Catalog.Of(Analyses.WaitGraph);

    public bool IsNone => _bits == 0;

    /// <summary>Whether any analysis of <paramref name="other"/> is selected.</summary>
    public bool Includes(AnalysisSelection other) => (_bits & other._bits) != 0;

    /// <summary>
    /// Whether every analysis of <paramref name="other"/> is selected (as <see cref="Enum.HasFlag"/>).
    /// </summary>
    public bool HasFlag(AnalysisSelection other) => (_bits & other._bits) == other._bits;

    public static AnalysisSelection operator |(AnalysisSelection a, AnalysisSelection b) => new(a._bits | b._bits);
    public static AnalysisSelection operator &(AnalysisSelection a, AnalysisSelection b) => new(a._bits & b._bits);
    public static AnalysisSelection operator ~(AnalysisSelection a) => new(~a._bits);

    internal static AnalysisSelection Bit(int index) => new(1UL << index);

    /// <summary>The built-in catalog's names ("all", "none", or "kernel,convoys").</summary>
    public override string ToString() => Analyses.Catalog.Format(this);
}
