using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Core;

namespace TraceLab.Reporting;

/// <summary>
/// report.json's "self": what TraceLab's own processes cost during the region, in a trace TraceLab recorded; and
/// "excluded": what the processes `--exclude-pid` left out cost (docs/metrics.md#self-exclusion). Their threads are in
/// no other figure of the report.
/// </summary>
public sealed class SelfCostSection
{
    /// <summary>
    /// The pids left out: the trace's TRACELAB_SELF_PIDS in its order, or the `--exclude-pid` list in its order.
    /// </summary>
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
    private readonly HashSet<int> _self;
    private readonly HashSet<int> _user;
    private readonly Func<int, int>? _processOf;

    private SelfExclusion(IReadOnlyList<int> pids, IReadOnlyList<int> userPids, Func<int, int>? processOf)
    {
        Pids = pids;
        UserPids = userPids;
        _self = [.. pids];
        _user = [.. userPids];
        _processOf = processOf;
    }

    /// <summary>Excludes nothing.</summary>
    public static SelfExclusion None { get; } = new([], [], null);

    /// <summary>
    /// TraceLab's processes as the trace's marker names them, less any the report is explicitly about
    /// (<paramref name="targets"/>: `analyze --pid` on TraceLab's own pid reports on it), and the processes the user
    /// left out (<paramref name="excluded"/>: `--exclude-pid`, a load generator or an agent beside the server).
    /// </summary>
    public static SelfExclusion Of(ProcessLineage lineage, ThreadTable names, MeasuredRegion region,
        IReadOnlyList<int> targets, IReadOnlyList<int>? excluded = null)
    {
        var pids = region.SelfPids.Where(p => !targets.Contains(p)).ToList();
        var user = (excluded ?? []).Where(p => !pids.Contains(p)).Distinct().ToList();
        return pids.Count == 0 && user.Count == 0
            ? None
            : new SelfExclusion(pids, user, tid => lineage.ReportedProcessOf(tid, names));
    }

    /// <summary>TraceLab's excluded processes; empty when none.</summary>
    public IReadOnlyList<int> Pids { get; }

    /// <summary>The processes `--exclude-pid` left out; empty when none.</summary>
    public IReadOnlyList<int> UserPids { get; }

    /// <summary>True when <paramref name="tid"/> is a thread of a process left out.</summary>
    public bool Excludes(int tid) =>
        _processOf is not null && (_self.Contains(_processOf(tid)) || _user.Contains(_processOf(tid)));

    /// <summary>
    /// Splits the ranked processes into the ones the report is about (order kept), TraceLab's cost and the cost of
    /// the processes `--exclude-pid` left out; a cost is null when nothing of its kind is excluded, so reports of
    /// traces without the marker and without the option do not change.
    /// </summary>
    public (List<ProcessSummary> Reported, SelfCostSection? Cost, SelfCostSection? Excluded) Split(
        List<ProcessSummary> processes)
    {
        if (Pids.Count == 0 && UserPids.Count == 0) return (processes, null, null);
        var reported = processes.Where(p => !_self.Contains(p.Pid) && !_user.Contains(p.Pid)).ToList();
        return (reported, Cost(Pids, _self, processes), Cost(UserPids, _user, processes));
    }

    private static SelfCostSection? Cost(IReadOnlyList<int> pids, HashSet<int> set, List<ProcessSummary> processes)
    {
        if (pids.Count == 0) return null;
        var own = processes.Where(p => set.Contains(p.Pid)).ToList();
        return new SelfCostSection
        {
            Pids = [.. pids],
            Threads = own.Sum(p => p.ThreadCount),
            RunNs = own.Sum(p => p.RunNs),
            ReadyNs = own.Sum(p => p.ReadyNs),
            WaitNs = own.Sum(p => p.WaitNs),
        };
    }

    /// <summary>
    /// "tracelab (pid 12, 34): 7.0 % of a CPU, 9 threads, not analysed": the one line every renderer shows; null
    /// when the report has no <see cref="RunReport.Self"/>.
    /// </summary>
    public static string? Line(RunReport report) =>
        report.Self is { } self ? CostLine("tracelab", self, report.Region.DurationNs) : null;

    /// <summary>
    /// "excluded with --exclude-pid (pid 56): 35.0 % of a CPU, 2 threads, not analysed"; null when the report has no
    /// <see cref="RunReport.Excluded"/>.
    /// </summary>
    public static string? ExcludedLine(RunReport report) =>
        report.Excluded is { } excluded
            ? CostLine("excluded with --exclude-pid", excluded, report.Region.DurationNs)
            : null;

    /// <summary>Both lines that apply, TraceLab's first.</summary>
    public static IEnumerable<string> Lines(RunReport report) =>
        new[] { Line(report), ExcludedLine(report) }.OfType<string>();

    private static string CostLine(string what, SelfCostSection cost, long regionNs)
    {
        var cpu = regionNs <= 0 ? "n/a" : (100.0 * cost.RunNs / regionNs).ToString("0.0", CultureInfo.InvariantCulture);
        var pids = string.Join(", ", cost.Pids.Select(p => p.ToString(CultureInfo.InvariantCulture)));
        return $"{what} (pid {pids}): {cpu} % of a CPU, {EnglishCount.Of(cost.Threads, "thread")}, not analysed";
    }
}
