using TraceLab.Analyzers.Timeline;

namespace TraceLab.Analyzers;

/// <summary>What an analysis run is asked for beyond its selection, read by the analyses that need it.</summary>
/// <param name="Timeline">The window the timeline records (report.html); null: no timeline.</param>
/// <param name="MarkersPossible">
/// False when the trace cannot hold markers (<see cref="Core.TraceInfo.MayHaveMarkers"/>): the timeline then stops
/// following threads past its window.
/// </param>
public sealed record AnalysisOptions(TimelineWindow? Timeline = null, bool MarkersPossible = true)
{
    public static AnalysisOptions Default { get; } = new();
}

/// <summary>
/// What an <see cref="AnalysisDefinition.Create"/> gets: the pass's accounting, the run's options, and the analyzers
/// already made in the same pass (those it observes, see <see cref="AnalysisDefinition.Observes"/>).
/// </summary>
public sealed class AnalysisContext
{
    private readonly IReadOnlyDictionary<AnalysisDefinition, IKernelAnalyzer> _made;

    internal AnalysisContext(ThreadAccounting accounting, AnalysisOptions options,
        IReadOnlyDictionary<AnalysisDefinition, IKernelAnalyzer> made)
    {
        Accounting = accounting;
        Options = options;
        _made = made;
    }

    public ThreadAccounting Accounting { get; }
    public AnalysisOptions Options { get; }

    /// <summary>The analyzer of <paramref name="analysis"/> in this pass; null when it is not selected.</summary>
    public IKernelAnalyzer? AnalyzerOf(AnalysisDefinition analysis) => _made.GetValueOrDefault(analysis);
}
