using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// The "threads" analysis: the scheduler accounting's per-thread figures, which every pass computes for the other
/// analyses anyway. Its analyzer reads no events of its own (<see cref="PerKindEvents.None"/>: the pass calls none of
/// its entry points); it hands the finished accounting to the report.
/// </summary>
public sealed class ThreadsAnalyzer(ThreadAccounting accounting) : IPerKindAnalyzer
{
    public ThreadAccounting Accounting { get; } = accounting;

    public PerKindEvents Wants => PerKindEvents.None;

    public void OnEvent(in KernelEvent e)
    {
    }

    public void OnRegionBegin()
    {
    }

    public void Complete(long end)
    {
    }
}
