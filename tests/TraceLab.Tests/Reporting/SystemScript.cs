using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// A hand-built system-wide trace fed the way a reader feeds it: before each event, the names its comm fields carry
/// go into the reader's <see cref="ThreadTable"/> (a sched_switch names both threads, a fork its child, an exit the
/// exiting thread), then the event goes to the session. No markers, no workload: a report without a target.
/// </summary>
internal sealed class SystemScript
{
    public const long Us = 1_000;

    private readonly List<(KernelEvent Event, (int Tid, string Name)[] Names)> _steps = [];

    public ThreadTable Names { get; } = new();

    public SystemScript Add(KernelEvent e, params (int Tid, string Name)[] names)
    {
        _steps.Add((e, names));
        return this;
    }

    /// <summary>A switch naming both threads, as sched_switch's prev_comm / next_comm do.</summary>
    public SystemScript Switch(
        long t, int cpu, (int Tid, string Name) prev, long prevState, (int Tid, string Name) next) =>
        Add(KernelEvent.Switch(t, cpu, prev.Tid, 120, prevState, next.Tid, 120), prev, next);

    public RunReport Report(int cpus = 2, long[]? lostPerCpu = null, int top = SystemOverview.DefaultTop,
        AnalysisSelection? kinds = null, int? pid = null, IReadOnlyList<int>? excludePids = null)
    {
        using var session = new AnalysisSession(kinds ?? AnalysisSelection.All, names: Names);
        foreach (var (e, names) in _steps.OrderBy(s => s.Event.Timestamp))
        {
            foreach (var (tid, name) in names)
                if (tid > 0) Names.SetName(tid, name);
            session.OnEvent(e);
        }
        session.Complete();
        var info = new TraceInfo
        {
            Backend = "test",
            TraceFile = "hand-built",
            CpuCount = cpus,
            LostEventsPerCpu = lostPerCpu,
        };
        return ReportBuilder.Build(info, session.Names, session, workload: null, pidOverride: pid, topProcesses: top,
            excludePids: excludePids);
    }
}
