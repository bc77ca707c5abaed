using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// Runs <see cref="ThreadAccounting"/> and any number of <see cref="IKernelAnalyzer"/>s over one stream of events:
/// one pass, one measured region, the region-begin reset delivered to all of them at the same event.
/// </summary>
public sealed class AnalysisPass : IKernelEventSink
{
    private readonly IKernelAnalyzer[] _analyzers;

    public AnalysisPass(ThreadAccounting accounting, params IKernelAnalyzer[] analyzers)
    {
        Accounting = accounting;
        _analyzers = analyzers;
    }

    public ThreadAccounting Accounting { get; }
    public MeasuredRegion Region => Accounting.Region;

    public void OnEvent(in KernelEvent e)
    {
        var hadBegin = Accounting.Region.HasBegin;
        Accounting.OnEvent(e);
        if (!hadBegin && Accounting.Region.HasBegin)
            foreach (var a in _analyzers) a.OnRegionBegin();
        foreach (var a in _analyzers) a.OnEvent(e);
    }

    /// <summary>Closes every analysis at the region's end (or the last event's time). Call once.</summary>
    public void Complete()
    {
        Accounting.Complete();
        var end = Accounting.Region.HasEnd ? Accounting.Region.End : Accounting.LastTimestamp;
        foreach (var a in _analyzers) a.Complete(end);
    }
}
