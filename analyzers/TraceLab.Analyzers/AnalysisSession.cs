using TraceLab.Analyzers.Kernel;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Smp;
using TraceLab.Analyzers.Timeline;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Analyzers.Wakeups;
using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>The analyzers one run needs, wired into a single <see cref="AnalysisPass"/>.</summary>
public sealed class AnalysisSession : IKernelEventSink
{
    private readonly AnalysisPass _pass;

    /// <param name="timeline">Also record a thread timeline of this window (for the HTML report); null: none.</param>
    public AnalysisSession(AnalysisKind kinds, TimelineWindow? timeline = null)
    {
        Kinds = kinds;
        Accounting = new ThreadAccounting();
        var analyzers = new List<IKernelAnalyzer>();
        if (kinds.HasFlag(AnalysisKind.Kernel)) analyzers.Add(Kernel = new KernelTimeAnalyzer(Accounting));
        if (kinds.HasFlag(AnalysisKind.Convoys)) analyzers.Add(Convoys = new ConvoyAnalyzer(Accounting));
        if (kinds.HasFlag(AnalysisKind.Wakeups)) analyzers.Add(Wakeups = new WakeupAnalyzer(Accounting));
        if (kinds.HasFlag(AnalysisKind.Smp)) analyzers.Add(Smp = new SmpAnalyzer(Accounting));
        if (kinds.HasFlag(AnalysisKind.WaitGraph)) analyzers.Add(WaitGraph = new WaitForGraphAnalyzer(Accounting.Region, Accounting.Slots));
        if (timeline is { } window)
        {
            analyzers.Add(Timeline = new TimelineAnalyzer(Accounting, window));
            Timeline.Observe(Convoys, Wakeups);
        }
        _pass = new AnalysisPass(Accounting, [.. analyzers]);
    }

    public AnalysisKind Kinds { get; }
    public ThreadAccounting Accounting { get; }
    public KernelTimeAnalyzer? Kernel { get; }
    public ConvoyAnalyzer? Convoys { get; }
    public WakeupAnalyzer? Wakeups { get; }
    public SmpAnalyzer? Smp { get; }
    public WaitForGraphAnalyzer? WaitGraph { get; }
    public TimelineAnalyzer? Timeline { get; }

    public void OnEvent(in KernelEvent e) => _pass.OnEvent(e);

    public void Complete() => _pass.Complete();
}
