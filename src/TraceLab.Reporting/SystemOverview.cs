using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting;

/// <summary>
/// report.json's "system": what the system overview of a report without a target process rests on
/// (docs/metrics.md, "System overview"). The ranked processes themselves are report.json's processes[].
/// </summary>
public sealed class SystemSection
{
    /// <summary>How many of the top-ranked processes get a detailed section (--top N).</summary>
    public int TopProcesses { get; init; }
    /// <summary>Their pids, in rank order (the first <see cref="TopProcesses"/> of processes[]).</summary>
    public List<int> DetailedPids { get; init; } = [];
    /// <summary>The trace's CPUs.</summary>
    public int Cpus { get; init; }
    /// <summary>CPUs that logged no event (offline, or idle with nothing logged); no time is charged on them.</summary>
    public List<int> SilentCpus { get; init; } = [];
    /// <summary>CPUs × the region's length: the CPU time there was.</summary>
    public long CpuCapacityNs { get; init; }
    /// <summary>Run time of every thread (idle, tid 0, is never a thread): the CPU time used.</summary>
    public long BusyNs { get; init; }
    /// <summary>Tids that more than one thread had (a thread exited and its tid was given to a new one).</summary>
    public int ReusedTids { get; init; }
}

/// <summary>
/// The opening of a report without a target: every process ranked (time blocked on lock objects, then ready time),
/// then a section per top process with its threads. Terminal tables show 10 rows; report.md folds the long tail
/// into a collapsed list (&lt;details&gt;, also in report.html); report.json keeps every process and thread.
/// </summary>
public static class SystemOverview
{
    public const int DefaultTop = 3;

    /// <summary>Rows of a table report.md shows before folding the rest into a collapsed list.</summary>
    public const int MarkdownRows = 20;

    public static SystemSection Build(TraceInfo info, ThreadAccounting accounting, List<ProcessSummary> processes,
        int top, int reusedTids, long regionNs)
    {
        var cpus = Math.Max(info.CpuCount, 1);
        long busy = 0;
        foreach (var (tid, s) in accounting.Threads)
            if (tid > 0) busy += s.RunNs;
        return new SystemSection
        {
            TopProcesses = top,
            DetailedPids = processes.Take(top).Select(p => p.Pid).ToList(),
            Cpus = cpus,
            SilentCpus = [.. accounting.SilentCpus(info.CpuCount)],
            CpuCapacityNs = cpus * Math.Max(regionNs, 0),
            BusyNs = busy,
            ReusedTids = reusedTids,
        };
    }

    /// <summary>The threads the detailed sections are about (those of the top processes).</summary>
    public static HashSet<int> DetailedTids(RunReport r)
    {
        var pids = r.System?.DetailedPids.ToHashSet() ?? [];
        return r.Threads.Where(t => pids.Contains(t.Pid)).Select(t => t.Tid).ToHashSet();
    }

    /// <summary>
    /// The overview and the detailed sections, for every renderer; null when the report has a target.
    /// </summary>
    public static IReadOnlyList<ReportBlock>? View(RunReport r, ThreadRanking rank)
    {
        if (r.System is not { } sys) return null;
        var regionNs = r.Region.DurationNs;
        var idleNs = Math.Max(sys.CpuCapacityNs - sys.BusyNs, 0);
        var threadCount = r.Processes.Sum(p => p.ThreadCount);
        var summary = $"{Units.N(r.Processes.Count)} processes, {Units.N(threadCount)} threads over " +
            $"{Units.S(regionNs)} s on {sys.Cpus} CPUs: busy {Pct(sys.BusyNs, sys.CpuCapacityNs)} " +
            $"({Units.S(sys.BusyNs)} CPU-s), idle {Units.S(idleNs)} CPU-s";
        var notes = new List<string>();
        if (sys.SilentCpus.Count > 0)
            notes.Add($"CPU {string.Join(", ", sys.SilentCpus)} logged no event (offline, or idle throughout)");
        if (sys.ReusedTids > 0)
            notes.Add($"{Units.N(sys.ReusedTids)} tids were reused by new threads: shown as tid#2, #3, …");
        // TraceLab's own cost, once: its threads are in the busy time above, in no table below.
        var left = SelfExclusion.Lines(r).Select(l => l + " (in the busy time; in no table or finding)").ToList();
        var selfLines = left.SelectMany(l => new[] { l + ".", "" }).ToArray();
        var blocks = new List<ReportBlock>
        {
            new MarkdownText(["## System overview", "", summary + ".", "", .. selfLines,
                "Processes ranked by time blocked on lock objects (in a lock's wait queue until handed the lock), " +
                "then by ready time (runnable, not running). Kernel threads are one row (pid 2, kthreadd); idle "
                    + "(swapper, tid 0) is not a " +
                "thread: it is the idle CPU time above."
                    + (notes.Count > 0 ? " " + string.Join("; ", notes) + "." : ""),
                ""]),
            new TerminalLine($"[bold]System[/] {Format.Escape(summary)}" +
                (notes.Count > 0 ? $" [grey]({Format.Escape(string.Join("; ", notes))})[/]" : "")),
            new TableBlock(ProcessTable(r, sys, regionNs)),
        };
        for (var i = left.Count - 1; i >= 0; i--)
            blocks.Insert(2, new TerminalLine($"[grey]{Format.Escape(left[i])}[/]"));
        var threadsByPid = r.Threads.GroupBy(t => t.Pid).ToDictionary(g => g.Key, g => g.ToList());
        for (var i = 0; i < sys.DetailedPids.Count; i++)
        {
            var pid = sys.DetailedPids[i];
            if (r.Processes.FirstOrDefault(p => p.Pid == pid) is not { } p) continue;
            blocks.AddRange(ProcessDetail(p, i + 1, threadsByPid.GetValueOrDefault(pid) ?? [], rank, regionNs));
        }
        return blocks;
    }

    private static ReportTable ProcessTable(RunReport r, SystemSection sys, long regionNs)
    {
        var classified = r.Processes.Any(p => p.LockClassNs is not null);
        List<Column> lockClass = classified ? [new("lock waits ms", TerminalHeading: "lock waits")] : [];
        var table = new ReportTable(classified ? "Processes (lock waits, lock queue wait, then ready time)"
            : "Processes (lock wait, then ready time)",
        [
            new("#"), new("pid"), Column.Left("process"), new("threads"), .. lockClass,
            new("lock wait ms", TerminalHeading: "lock ms"), Column.MarkdownOnly("blocked in lock calls ms"),
            new("ready ms"), new("run ms"),
            new("CPU %"), new("wait ms"), new("voluntary", TerminalHeading: "vol"),
            new("involuntary", TerminalHeading: "invol"),
        ])
        { RowNoun = "processes", MarkdownCollapseAfter = MarkdownRows };
        for (var i = 0; i < r.Processes.Count; i++)
        {
            var p = r.Processes[i];
            List<Cell> lockNs = classified ? [Units.Ms(p.LockClassNs ?? 0)] : [];
            table.Add([Format.Int(i + 1), Format.Int(p.Pid),
                new(p.Name, Short(p.Name, 28)), Units.N(p.ThreadCount), .. lockNs,
                Units.Ms(p.LockWaitNs), Units.Ms(p.LockBlockedNs), Units.Ms(p.ReadyNs), Units.Ms(p.RunNs),
                CpuPct(p.RunNs, regionNs),
                Units.Ms(p.WaitNs), Units.N(p.VoluntarySwitches), Units.N(p.InvoluntarySwitches)]);
        }
        return table;
    }

    private static IEnumerable<ReportBlock> ProcessDetail(ProcessSummary p, int rank, List<ThreadSection> threads,
        ThreadRanking ranking, long regionNs)
    {
        var title = $"Process {p.Pid} {p.Name} (#{rank})";
        var life = (p.StartNs, p.EndNs) switch
        {
            ({ } s, { } e) => $", started and ended in the trace ({Units.S(e - s)} s)",
            ({ }, null) => ", started in the trace",
            (null, { }) => ", ended in the trace",
            _ => "",
        };
        var classified = p.LockClassNs is { } lockClass ? $"lock waits {Units.Ms(lockClass)} ms, " : "";
        var line = $"{Units.N(p.ThreadCount)} thread{(p.ThreadCount == 1 ? "" : "s")}{life}: {classified}lock wait " +
            $"{Units.Ms(p.LockWaitNs)} ms (blocked in lock calls {Units.Ms(p.LockBlockedNs)} ms), ready " +
            $"{Units.Ms(p.ReadyNs)} ms, run {Units.Ms(p.RunNs)} ms ({CpuPct(p.RunNs, regionNs)} % of a CPU), " +
            $"{Units.N(p.VoluntarySwitches)} voluntary / {Units.N(p.InvoluntarySwitches)} involuntary switches";
        var table = new ReportTable($"{title}: threads",
        [
            new("tid"), Column.Left("name"),
            ranking.Classified ? new("lock waits ms", TerminalHeading: "lock ms")
                : new("blocked in lock calls ms", TerminalHeading: "lock ms"),
            new("ready ms"),
            new("run ms"), new("wait ms"), new("voluntary", TerminalHeading: "vol"),
            new("involuntary", TerminalHeading: "invol"), new("migrations", TerminalHeading: "migr"),
            new("ready p99 µs", TerminalHeading: "rdy p99 µs"), Column.Left("top waker"),
        ])
        { RowNoun = $"threads of {p.Pid}", MarkdownCollapseAfter = MarkdownRows };
        // report.md lists them in rank order; the terminal picks its 10 by the same ranking.
        table.AddThreadRows(threads.OrderByDescending(t => t.Tid, ranking).ToList(), t => t.Tid, t =>
        {
            var top = t.TopWakers.FirstOrDefault();
            return
            [
                ThreadIds.Display(t.Tid) + (t.MayBeAffectedByLoss == true ? " ⚠" : ""),
                new(t.Name, Short(t.Name, 24)), Units.Ms(ranking.LockBlockedNs(t.Tid)), Units.Ms(t.ReadyNs),
                Units.Ms(t.RunNs), Units.Ms(t.WaitNs), Units.N(t.VoluntarySwitches),
                Units.N(t.InvoluntarySwitches), Units.N(t.Migrations), Units.Us(t.ReadyLatency.P99Ns),
                top is null ? "" : $"{Short(top.Name, 16)} ({ThreadIds.Display(top.Tid)}) ×{Units.N(top.Count)}",
            ];
        });
        return
        [
            new MarkdownText($"## {title}", "", line + ".", ""),
            new TerminalLine($"[bold]{Format.Escape(title)}[/] {Format.Escape(line)}"),
            new TableBlock(table),
        ];
    }

    /// <summary>Run time as a share of one CPU over the region, in percent ("185.0" for almost two CPUs).</summary>
    private static string CpuPct(long runNs, long regionNs) =>
        regionNs <= 0 ? "n/a" : (100.0 * runNs / regionNs).ToString("0.0", CultureInfo.InvariantCulture);

    private static string Pct(long part, long whole) =>
        whole <= 0 ? "n/a" : (100.0 * part / whole).ToString("0.0", CultureInfo.InvariantCulture) + " %";

    private static string Short(string name, int max) => name.Length <= max ? name : name[..(max - 1)] + "…";
}
