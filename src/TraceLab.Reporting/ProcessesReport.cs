using TraceLab.Analyzers;
using TraceLab.Analyzers.Waits;
using TraceLab.Core;

namespace TraceLab.Reporting;

/// <summary>One process in report.json's processes[] (docs/metrics.md, "Processes").</summary>
public sealed class ProcessSummary
{
    public int Pid { get; init; }
    public required string Name { get; init; }
    /// <summary>The traced program's command line (`trace -- ...`); null for other processes.</summary>
    public string? CommandLine { get; init; }
    /// <summary>The process that forked it, when the fork is in the trace.</summary>
    public int? ParentPid { get; init; }
    /// <summary>
    /// Fork / exit of its main thread when in the trace (trace clock, ns); a process older than the capture has its
    /// /proc start time instead (TraceLab's own captures), which lies before the trace's first event.
    /// </summary>
    public long? StartNs { get; init; }
    public long? EndNs { get; init; }
    public int ThreadCount { get; init; }
    public long RunNs { get; init; }
    public long ReadyNs { get; init; }
    public long WaitNs { get; init; }
    /// <summary>
    /// Time its threads waited in a lock's queue before a handoff (convoys analysis; 0 without it): the first
    /// ranking key.
    /// </summary>
    public long LockWaitNs { get; init; }
    /// <summary>
    /// Time its threads were blocked inside futex, semop and semtimedop calls (kernel analysis with lock syscalls
    /// traced; 0 without). Includes idle waits (a thread pool on a condition variable), so it does not rank.
    /// </summary>
    public long LockBlockedNs { get; init; }
    /// <summary>
    /// Time its threads were blocked in waits the wait classification calls lock waits
    /// (docs/metrics.md#wait-classes; null without the waits analysis): the first ranking key when present, so an
    /// idle pool parked on a condition variable does not rank as contended.
    /// </summary>
    public long? LockClassNs { get; init; }
    public long VoluntarySwitches { get; init; }
    public long InvoluntarySwitches { get; init; }
    /// <summary>True for the group of all kernel threads (pid 2, kthreadd); null (omitted) for a process.</summary>
    public bool? KernelThreads { get; init; }
    /// <summary>
    /// True for the processes the report is about (the program and its children, --pid, the workload).
    /// </summary>
    public bool Target { get; init; }
}

/// <summary>Every process outside the target, summed: the "rest of the system" line.</summary>
public sealed class RestOfSystemSection
{
    public int Processes { get; init; }
    public int Threads { get; init; }
    public long RunNs { get; init; }
    public long ReadyNs { get; init; }
    public long WaitNs { get; init; }
}

/// <summary>
/// Groups the trace's threads into processes (<see cref="ProcessLineage.ReportedProcessOf"/>) and ranks them: time
/// blocked in lock waits (the wait classification, when it ran), then time in lock objects' queues until handed the
/// lock, then
/// ready time, then pid.
/// </summary>
public static class ProcessesReport
{
    public static List<ProcessSummary> Build(AnalysisSession analyses, ThreadTable names,
        IReadOnlySet<int> targetTids, RunSection? run, int targetPid)
    {
        var accounting = analyses.Accounting;
        var lineage = accounting.Lineage;
        var convoy = analyses.Convoys;
        var kernel = analyses.Kernel;
        var waits = analyses.AnalyzerOf(WaitClassAnalyzer.Analysis) as WaitClassAnalyzer;
        var groups = new Dictionary<int, List<int>>();
        foreach (var (tid, s) in accounting.Threads)
        {
            if (tid <= 0 || s.RunNs + s.ReadyNs + s.WaitNs == 0 && !targetTids.Contains(tid)) continue;
            var pid = lineage.ReportedProcessOf(tid, names);
            if (!groups.TryGetValue(pid, out var list)) groups[pid] = list = [];
            list.Add(tid);
        }
        return groups.Select(g =>
        {
            var stats = g.Value.Select(accounting.Stats).ToList();
            var lockWait = convoy is null ? 0
                : g.Value.Sum(t => convoy.Threads.TryGetValue(t, out var c) ? c.QueueWait.Sum : 0);
            var lockBlocked = kernel is null ? 0
                : g.Value.Sum(t => kernel.Threads.TryGetValue(t, out var k) ? LockSyscalls.BlockedNs(k) : 0);
            var kernelThreads = g.Key == ProcessLineage.KernelThreadsPid
                && g.Value.Any(t => lineage.IsKernelThread(t, names));
            int? parent = kernelThreads ? null
                : lineage.Parents.TryGetValue(g.Key, out var p) && p > 0 ? lineage.ReportedProcessOf(p, names) : null;
            return new ProcessSummary
            {
                Pid = g.Key,
                Name = kernelThreads ? ProcessLineage.KernelThreadsName : NameOf(g.Key, g.Value, names),
                CommandLine = g.Key == targetPid ? run?.Command : null,
                ParentPid = parent,
                StartNs = lineage.Born.TryGetValue(g.Key, out var b) ? b
                    : accounting.Region.ProcessStarts.TryGetValue(g.Key, out var listed) ? listed : null,
                EndNs = lineage.Ended.TryGetValue(g.Key, out var e) ? e : null,
                ThreadCount = g.Value.Count,
                RunNs = stats.Sum(s => s.RunNs),
                ReadyNs = stats.Sum(s => s.ReadyNs),
                WaitNs = stats.Sum(s => s.WaitNs),
                LockWaitNs = lockWait,
                LockBlockedNs = lockBlocked,
                LockClassNs = waits is null ? null
                    : g.Value.Sum(t => waits.Threads.TryGetValue(t, out var w) ? w.Ns(WaitClass.Lock) : 0),
                VoluntarySwitches = stats.Sum(s => s.VoluntarySwitches),
                InvoluntarySwitches = stats.Sum(s => s.InvoluntarySwitches),
                KernelThreads = kernelThreads ? true : null,
                Target = g.Value.Any(targetTids.Contains),
            };
        })
        .OrderByDescending(p => p.LockClassNs ?? 0).ThenByDescending(p => p.LockWaitNs)
        .ThenByDescending(p => p.ReadyNs).ThenBy(p => p.Pid).ToList();
    }

    // The main thread may never have switched in the region: then a thread of it gives the comm.
    /// <summary>
    /// A process's name: its main thread's, else the first of its threads' that the trace names, else "tid N".
    /// </summary>
    internal static string NameOf(int pid, IEnumerable<int> tids, ThreadTable names) =>
        names.TryGetName(pid, out var n) ? n
            : tids.Select(t => names.TryGetName(t, out var tn) ? tn : null).FirstOrDefault(x => x is not null)
              ?? names.NameOf(pid);

    public static RestOfSystemSection Rest(IEnumerable<ProcessSummary> processes)
    {
        var rest = processes.Where(p => !p.Target).ToList();
        return new RestOfSystemSection
        {
            Processes = rest.Count,
            Threads = rest.Sum(p => p.ThreadCount),
            RunNs = rest.Sum(p => p.RunNs),
            ReadyNs = rest.Sum(p => p.ReadyNs),
            WaitNs = rest.Sum(p => p.WaitNs),
        };
    }
}
