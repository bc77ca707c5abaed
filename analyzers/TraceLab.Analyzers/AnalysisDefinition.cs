namespace TraceLab.Analyzers;

/// <summary>
/// One analysis's analyzer half, described once: what `--analysis` calls it, what it costs per event (a hint for
/// <see cref="Parallel.AnalysisPlan"/>), which other analyses' analyzers it observes and how its analyzer is made. It
/// holds no selection bit: its place in an <see cref="AnalysisCatalog"/> gives it one, so making a definition
/// registers nothing. The report half and the report order are TraceLab.Reporting's AnalysisReports.All
/// (docs/architecture.md, "Add an analysis").
/// </summary>
public sealed class AnalysisDefinition
{
    /// <param name="name">Its `--analysis` name, also its entry in report.json's "analyses".</param>
    /// <param name="costHint">
    /// Relative per-event cost, ns/event on the `timemutex mutex` capture with lock syscalls (docs/performance.md):
    /// how <see cref="Parallel.AnalysisPlan"/> balances analysis threads, never something results depend on. 0 for an
    /// analysis that only reads the accounting (threads): it adds no pass of its own.
    /// </param>
    /// <param name="create">Makes its analyzer in a pass (the pass's accounting, options, observed analyzers).</param>
    /// <param name="observes">
    /// Analyses whose analyzers this one observes when they are selected: the plan keeps them in its pass, and they
    /// are made before it.
    /// </param>
    /// <param name="requested">
    /// Non-null for an analysis selected by what the run asks for (the timeline: a window), never by `--analysis`
    /// names: whether <see cref="AnalysisOptions"/> ask for it.
    /// </param>
    public AnalysisDefinition(string name, double costHint, Func<AnalysisContext, IKernelAnalyzer> create,
        IReadOnlyList<AnalysisDefinition>? observes = null, Func<AnalysisOptions, bool>? requested = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ArgumentOutOfRangeException.ThrowIfNegative(costHint);
        ArgumentNullException.ThrowIfNull(create);
        Name = name;
        CostHint = costHint;
        Create = create;
        Observes = observes ?? [];
        Requested = requested;
    }

    public string Name { get; }
    public double CostHint { get; }
    public Func<AnalysisContext, IKernelAnalyzer> Create { get; }
    public IReadOnlyList<AnalysisDefinition> Observes { get; }
    public Func<AnalysisOptions, bool>? Requested { get; }

    /// <summary>Selected by the run's options rather than by name (<see cref="Requested"/>).</summary>
    public bool OnRequest => Requested is not null;

    public override string ToString() => Name;
}
