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
            foreach (var analyzer in _analyzers) analyzer.OnRegionBegin();
        // One call site per position: each stays monomorphic (a cheap interface dispatch), where a single loop call
        // site sees every analyzer type and pays the polymorphic resolve on every event.
        var a = _analyzers;
        switch (a.Length)
        {
            case 0: return;
            case 1: a[0].OnEvent(e); return;
            case 2: a[0].OnEvent(e); a[1].OnEvent(e); return;
            case 3: a[0].OnEvent(e); a[1].OnEvent(e); a[2].OnEvent(e); return;
            case 4: a[0].OnEvent(e); a[1].OnEvent(e); a[2].OnEvent(e); a[3].OnEvent(e); return;
            case 5: a[0].OnEvent(e); a[1].OnEvent(e); a[2].OnEvent(e); a[3].OnEvent(e); a[4].OnEvent(e); return;
            default:
                a[0].OnEvent(e); a[1].OnEvent(e); a[2].OnEvent(e); a[3].OnEvent(e); a[4].OnEvent(e);
                for (var i = 5; i < a.Length; i++) a[i].OnEvent(e);
                return;
        }
    }

    /// <summary>Closes every analysis at the region's end (or the last event's time). Call once.</summary>
    public void Complete()
    {
        Accounting.Complete();
        var end = Accounting.Region.HasEnd ? Accounting.Region.End : Accounting.LastTimestamp;
        foreach (var a in _analyzers) a.Complete(end);
    }
}
