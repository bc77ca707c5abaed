using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// One analysis in the single streaming pass (<see cref="AnalysisPass"/>). It receives every event in timestamp order
/// after <see cref="ThreadAccounting"/> has seen it, shares its <see cref="MeasuredRegion"/>, and must not allocate per
/// event: memory is bounded by threads, CPUs and lock objects, never by trace length.
/// </summary>
public interface IKernelAnalyzer : IKernelEventSink
{
    /// <summary>
    /// The region's begin marker was just seen: drop counts accumulated so far. Open intervals keep their start
    /// times; they are clipped to the region (<see cref="MeasuredRegion.Overlap"/>) when they close.
    /// </summary>
    void OnRegionBegin();

    /// <summary>
    /// After the last event: close open intervals at <paramref name="end"/> (region end or last timestamp).
    /// </summary>
    void Complete(long end);
}
