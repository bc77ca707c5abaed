using TraceLab.Analyzers;
using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Formats.Symbols;
using TraceLab.Reporting;

namespace TraceLab.Pipeline;

/// <summary>
/// Follows the pipeline's one pass beside the analyses, as an export does: it writes each event while the trace is
/// read and adds TraceLab's conclusions once they are known. What it is told at the end is what `tracelab analyze`
/// reports for the same request: the same session, the same report, the same stacks.
/// </summary>
public interface IPassObserver
{
    /// <summary>Called once the trace is open and the analyses are made, before the first event.</summary>
    /// <returns>The sink that gets every event after the analyses have taken it; null: none.</returns>
    IKernelEventSink? Attach(IKernelTraceReader reader, AnalysisSession session);

    /// <summary>Called when the analyses are complete and the report is built, before the trace is closed.</summary>
    void Complete(PassOutcome outcome);
}

/// <summary>What a pass left for its <see cref="IPassObserver"/>.</summary>
/// <param name="Reader">The trace, still open.</param>
/// <param name="Session">The analyses, complete.</param>
/// <param name="Report">The report built from them.</param>
/// <param name="Stacks">The lock stacks, when the trace recorded stacks.</param>
/// <param name="Symbolizer">The symbolizer of those stacks (the report's), when there are stacks.</param>
public sealed record PassOutcome(IKernelTraceReader Reader, AnalysisSession Session, RunReport Report,
    LockStackAnalyzer? Stacks, StackSymbolizer? Symbolizer);
