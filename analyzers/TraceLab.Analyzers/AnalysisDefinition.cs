namespace TraceLab.Analyzers;

/// <summary>
/// One analysis's analyzer half, described once: what `--analysis` calls it, what it costs per event (a hint for
/// <see cref="Parallel.AnalysisPlan"/>) and how its analyzer is made. Its selection flag, <see cref="Kind"/>, is
/// not written by hand: each definition takes the next free bit when it is made. The report half and the order of
/// the analyses are TraceLab.Reporting's AnalysisReports.All, the one list an analysis is registered in
/// (docs/architecture.md, "Add an analysis").
/// </summary>
public sealed class AnalysisDefinition
{
    private static readonly List<AnalysisDefinition> Made = [];

    /// <param name="name">Its `--analysis` name, also its entry in report.json's "analyses".</param>
    /// <param name="costHint">
    /// Relative per-event cost, ns/event on the `timemutex mutex` capture with lock syscalls (docs/performance.md):
    /// how <see cref="Parallel.AnalysisPlan"/> balances analysis threads, never something results depend on.
    /// </param>
    /// <param name="create">
    /// Makes its analyzer over a pass's accounting; null when the analysis only reads the accounting (threads).
    /// </param>
    public AnalysisDefinition(string name, double costHint, Func<ThreadAccounting, IKernelAnalyzer>? create)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        Name = name;
        CostHint = costHint;
        Create = create;
        lock (Made)
        {
            if (Made.Any(d => string.Equals(d.Name, name, StringComparison.OrdinalIgnoreCase)))
                throw new ArgumentException($"analysis '{name}' is defined twice", nameof(name));
            Kind = AnalysisKind.Bit(Made.Count);
            Made.Add(this);
        }
    }

    public string Name { get; }
    public double CostHint { get; }
    public Func<ThreadAccounting, IKernelAnalyzer>? Create { get; }

    /// <summary>The selection flag: a bit of its own, taken when the definition was made.</summary>
    public AnalysisKind Kind { get; }

    /// <summary>Every definition made so far, in the order they were made (not report order).</summary>
    internal static AnalysisDefinition[] All
    {
        get
        {
            lock (Made) return [.. Made];
        }
    }

    public override string ToString() => Name;
}
