using System.Globalization;
using TraceLab.Analyzers.Timeline;

namespace TraceLab.Reporting.Html;

/// <summary>
/// What report.html's thread timeline shows (docs/metrics.md#timeline-focus). A report about a process shows all its
/// threads in the window asked for. A system report (no target) has every thread of the machine, most of them kernel
/// threads that have nothing to do with the question: it shows the threads of the processes the findings name, in
/// the worst window of the first finding that has one (unless the user chose a window); without findings, the
/// threads of the top-ranked processes of the system overview, in the window asked for.
/// </summary>
public static class TimelineFocus
{
    /// <summary>Rows drawn at most: beyond this a timeline is too tall to read (report.json has every
    /// thread).</summary>
    public const int MaxRows = 40;

    /// <summary>Processes the page names when it says why these rows.</summary>
    private const int NamedProcesses = 6;

    /// <summary>
    /// The window to record for a system report: the first worst window of the first finding that lists one; null
    /// for a report about a process, or when no finding has a window (the default window then stands).
    /// </summary>
    public static TimelineWindow? Window(RunReport report)
    {
        if (report.System is null) return null;
        return report.Findings?.FirstOrDefault(f => f.Windows.Count > 0)?.Windows[0];
    }

    /// <summary>
    /// The threads drawn, in order; why these (a sentence for the page; null for a process report); how many more of
    /// those processes' threads are not drawn (<see cref="MaxRows"/>).
    /// </summary>
    public static (IReadOnlyList<ThreadSection> Rows, string? Why, int LeftOut) Rows(RunReport report)
    {
        if (report.System is not { } system) return (report.Threads, null, 0);
        var pidOf = report.Threads.GroupBy(t => t.Tid).ToDictionary(g => g.Key, g => g.First().Pid);
        var processRank = report.Processes.Select((p, i) => (p.Pid, i)).ToDictionary(x => x.Pid, x => x.i);
        var named = new List<int>();
        var namedTids = new HashSet<int>();
        // The first finding's processes first, each finding's in the overview's rank order.
        foreach (var finding in report.Findings ?? [])
        {
            var its = new List<int>();
            foreach (var tid in finding.Threads)
                if (pidOf.TryGetValue(tid, out var pid))
                {
                    namedTids.Add(tid);
                    if (!named.Contains(pid) && !its.Contains(pid)) its.Add(pid);
                }
            named.AddRange(its.OrderBy(p => processRank.GetValueOrDefault(p, int.MaxValue)).ThenBy(p => p));
        }
        var kernel = report.Processes.Where(p => p.KernelThreads == true).Select(p => p.Pid).ToHashSet();
        List<int> pids;
        string why;
        if (named.Count > 0)
        {
            pids = named;
            why = "the threads of the processes the findings name";
        }
        else
        {
            pids = system.DetailedPids;
            why = "no finding names a thread: the threads of the top-ranked processes of the system overview";
        }
        var rank = pids.Select((pid, i) => (pid, i)).ToDictionary(x => x.pid, x => x.i);
        // Kernel threads are one group: only the ones a finding names are drawn, never all of them.
        var rows = report.Threads
            .Where(t => rank.ContainsKey(t.Pid) && (!kernel.Contains(t.Pid) || namedTids.Contains(t.Tid)))
            .OrderBy(t => rank[t.Pid]).ThenBy(t => t.Tid)
            .ToList();
        var names = pids.Select(pid => report.Processes.FirstOrDefault(p => p.Pid == pid) is { } p
            ? $"{p.Name} ({pid})" : pid.ToString(CultureInfo.InvariantCulture));
        var more = pids.Count - NamedProcesses;
        why += ": " + string.Join(", ", names.Take(NamedProcesses))
            + (more > 0 ? string.Create(CultureInfo.InvariantCulture, $" and {more:N0} more") : "");
        var leftOut = Math.Max(rows.Count - MaxRows, 0);
        return (rows.Take(MaxRows).ToList(), why, leftOut);
    }
}
