using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Core;

namespace TraceLab.Reporting;

/// <summary>
/// report.json's "self": what TraceLab's own processes cost during the region, in a trace TraceLab recorded
/// (docs/metrics.md#self-exclusion). Their threads are in no other figure of the report.
/// </summary>
public sealed class SelfCostSection
{
    /// <summary>The pids the trace names as TraceLab's (TRACELAB_SELF_PIDS), in the trace's order.</summary>
    public List<int> Pids { get; init; } = [];
    /// <summary>Threads of those processes that ran, waited for a CPU or were blocked in the region.</summary>
    public int Threads { get; init; }
    /// <summary>Their run time in the region (ns).</summary>
    public long RunNs { get; init; }
    /// <summary>Their ready time in the region (ns).</summary>
    public long ReadyNs { get; init; }
    /// <summary>Their wait (blocked) time in the region (ns).</summary>
    public long WaitNs { get; init; }
}

/// <summary>
/// TraceLab's own processes in a trace it recorded (the CLI with its copier and runtime threads, the capture
/// guard): the trace names them in a TRACELAB_SELF_PIDS marker; the report leaves their threads out of every thread
/// list, ranking, section, finding and the timeline, and shows their cost once (docs/metrics.md#self-exclusion).
/// A trace without the marker (another tool's, an older TraceLab's) excludes nothing.
/// </summary>
public sealed class SelfExclusion
{
    private readonly HashSet<int> _pids;
    private readonly Func<int, int>? _processOf;

    private SelfExclusion(IReadOnlyList<int> pids, Func<int, int>? processOf)
    {
        Pids = pids;
        _pids = [.. pids];
        _processOf = processOf;
    }

    /// <summary>Excludes nothing.</summary>
    public static SelfExclusion None { get; } = new([], null);

    /// <summary>
    /// TraceLab's processes as the trace's marker names them, less any the report is explicitly about
    /// (<paramref name="targets"/>: `analyze --pid` on TraceLab's own pid reports on it).
    /// </summary>
    public static SelfExclusion Of(ProcessLineage lineage, ThreadTable names, MeasuredRegion region,
        IReadOnlyList<int> targets)
    {
        var pids = region.SelfPids.Where(p => !targets.Contains(p)).ToList();
        return pids.Count == 0 ? None : new SelfExclusion(pids, tid => lineage.ReportedProcessOf(tid, names));
    }

    /// <summary>The excluded processes; empty when nothing is excluded.</summary>
    public IReadOnlyList<int> Pids { get; }

    /// <summary>True when <paramref name="tid"/> is a thread of one of TraceLab's processes.</summary>
    public bool Excludes(int tid) => _processOf is not null && _pids.Contains(_processOf(tid));

    /// <summary>
    /// Splits the ranked processes into the ones the report is about (order kept) and TraceLab's cost; the cost is
    /// null when nothing is excluded, so reports of traces without the marker do not change.
    /// </summary>
    public (List<ProcessSummary> Reported, SelfCostSection? Cost) Split(List<ProcessSummary> processes)
    {
        if (Pids.Count == 0) return (processes, null);
        var own = processes.Where(p => _pids.Contains(p.Pid)).ToList();
        return (processes.Where(p => !_pids.Contains(p.Pid)).ToList(), new SelfCostSection
        {
            Pids = [.. Pids],
            Threads = own.Sum(p => p.ThreadCount),
            RunNs = own.Sum(p => p.RunNs),
            ReadyNs = own.Sum(p => p.ReadyNs),
            WaitNs = own.Sum(p => p.WaitNs),
        });
    }

    /// <summary>
    /// "tracelab (pid 12, 34): 7.0 % of a CPU, 9 threads, not analysed": the one line every renderer shows; null
    /// when the report has no <see cref="RunReport.Self"/>.
    /// </summary>
    public static string? Line(RunReport report)
    {
        if (report.Self is not { } self) return null;
        var regionNs = report.Region.DurationNs;
        var cpu = regionNs <= 0 ? "n/a" : (100.0 * self.RunNs / regionNs).ToString("0.0", CultureInfo.InvariantCulture);
        var pids = string.Join(", ", self.Pids.Select(p => p.ToString(CultureInfo.InvariantCulture)));
        return $"tracelab (pid {pids}): {cpu} % of a CPU, {EnglishCount.Of(self.Threads, "thread")}, not analysed";
    }
}
