using TraceLab.Analyzers.Waits;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Waits;

/// <summary>
/// The "waits" analysis in the report: blocked time by what it waited for (docs/metrics.md#wait-classes).
/// </summary>
public sealed class WaitsReport() : AnalysisReport<WaitClassAnalyzer, WaitsSection>(WaitClassAnalyzer.Analysis, "waits")
{
    /// <inheritdoc/>
    protected override WaitsSection Build(WaitClassAnalyzer a, ReportContext context)
    {
        var threads = new List<ThreadWaitsSection>();
        foreach (var tid in context.Tids.Order())
        {
            if (!a.Threads.TryGetValue(tid, out var s) || s.TotalNs == 0) continue;
            threads.Add(new ThreadWaitsSection
            {
                Tid = tid,
                Pid = context.Accounting.Lineage.ProcessOf(tid),
                Name = context.Names.NameOf(tid),
                Ns = WaitClasses.All.Select(s.Ns).ToList(),
                Waits = WaitClasses.All.Select(s.Waits).ToList(),
                SourceNs = WakeSources.All.Select(s.SourceNs).ToList(),
            });
        }
        var processes = threads.GroupBy(t => t.Pid).Select(g => new ProcessWaitsSection
        {
            Pid = g.Key,
            // A process whose main thread never ran in the trace is named by a thread of it.
            Name = context.Names.TryGetName(g.Key, out var name) ? name : g.First().Name,
            Threads = g.Count(),
            Ns = Sum(g.Select(t => t.Ns), WaitClasses.Count),
            SourceNs = Sum(g.Select(t => t.SourceNs), WakeSources.Count),
        })
            .OrderByDescending(p => p.Ns[(int)WaitClass.Lock]).ThenBy(p => p.Pid).ToList();
        return new WaitsSection
        {
            Classes = WaitClasses.All.Select(WaitClasses.Name).ToList(),
            Sources = WakeSources.All.Select(WakeSources.Name).ToList(),
            SawSyscalls = a.SawSyscalls,
            Ns = Sum(threads.Select(t => t.Ns), WaitClasses.Count),
            SourceNs = Sum(threads.Select(t => t.SourceNs), WakeSources.Count),
            Processes = processes,
            Threads = threads,
            Stacks = a.StackOutcome is { } outcome ? StacksOf(outcome, threads.Select(t => t.Tid).ToHashSet()) : null,
        };
    }

    /// <summary>The stack tags' outcome summed over the reported threads.</summary>
    private static WaitStacksSection StacksOf(WaitStackOutcome outcome, HashSet<int> reported)
    {
        long withNs = 0, withWaits = 0, taggedNs = 0;
        foreach (var (tid, f) in outcome.Threads)
        {
            if (!reported.Contains(tid)) continue;
            withNs += f.WithStackNs;
            withWaits += f.WithStackWaits;
            taggedNs += f.TaggedNs;
        }
        var moves = outcome.Moves.Where(m => reported.Contains(m.Tid))
            .GroupBy(m => (m.From, m.To, m.Tag))
            .Select(g => new WaitStackMoveSection
            {
                From = WaitClasses.Name(g.Key.From),
                To = WaitClasses.Name(g.Key.To),
                Tag = g.Key.Tag,
                Ns = g.Sum(m => m.Ns),
                Waits = g.Sum(m => m.Waits),
            })
            .OrderByDescending(m => m.Ns).ThenBy(m => m.From, StringComparer.Ordinal)
            .ThenBy(m => m.To, StringComparer.Ordinal).ThenBy(m => m.Tag, StringComparer.Ordinal).ToList();
        return new WaitStacksSection
        {
            WithStackNs = withNs,
            WithStackWaits = withWaits,
            TaggedNs = taggedNs,
            Moves = moves,
        };
    }

    /// <summary>What the stacks changed, in words: the time with a stack, tagged, and the heaviest moves.</summary>
    private static string StacksText(WaitStacksSection s)
    {
        var moved = s.Moves.Take(5).Select(m => $"{m.From} → {m.To} {Units.Ms(m.Ns)} ms ({m.Tag})");
        return $"{Units.Ms(s.WithStackNs)} ms had a blocking stack, {Units.Ms(s.TaggedNs)} ms of it named by a stack " +
            "tag" + (s.Moves.Count == 0 ? "; no class changed" : "; moved: " + string.Join(", ", moved) +
            (s.Moves.Count > 5 ? $" and {s.Moves.Count - 5} more" : ""));
    }

    private static List<long> Sum(IEnumerable<List<long>> rows, int n)
    {
        var sum = new long[n];
        foreach (var r in rows)
            for (var i = 0; i < n; i++) sum[i] += r[i];
        return [.. sum];
    }

    /// <inheritdoc/>
    protected override IReadOnlyList<ReportBlock> View(WaitsSection w)
    {
        var total = w.Ns.Sum();
        var intro = $"Blocked time by what it waited for: {Units.Ms(total)} ms in all; " +
            string.Join(", ", w.Classes.Select((c, i) => $"{c} {Units.Ms(w.Ns[i])}")) + " ms. Ended by: " +
            string.Join(", ", w.Sources.Select((s, i) => $"{s} {Units.Ms(w.SourceNs[i])}")) + " ms. " +
            (w.Stacks is { } st
                ? "From the syscall open at the switch-out, the task state, the waker and the syscall's result " +
                  "(rules and limits: docs/metrics.md#wait-classes), then from the blocking stack where a stack tag " +
                  $"names its function (docs/metrics.md#wait-stack-tags): {StacksText(st)}."
                : "From the syscall open at the switch-out, the task state, the waker and the syscall's result; no " +
                  "stacks (rules and limits: docs/metrics.md#wait-classes).") +
            (w.SawSyscalls ? "" : " The trace has no syscall events: every wait is unknown (trace with --syscalls).");

        var byProcess = new ReportTable("Blocked time by class, per process (ms)",
        [
            new("pid"), Column.Left("name"), new("threads"), .. w.Classes.Select(c => new Column(c)),
        ])
        { RowNoun = "processes" };
        foreach (var p in w.Processes)
            byProcess.Add([Format.Int(p.Pid), p.Name, Format.Int(p.Threads), .. p.Ns.Select(n => (Cell)Units.Ms(n))]);

        var byThread = new ReportTable("Blocked time by class, per thread (ms)",
        [
            new("tid"), Column.Left("name"), .. w.Classes.Select(c => new Column(c)),
            new("by peer", In: Shown.Markdown), new("by other process", In: Shown.Markdown),
            new("by signal", In: Shown.Markdown), new("by irq", In: Shown.Markdown),
        ])
        { RowNoun = "threads" };
        byThread.AddThreadRows(w.Threads, t => t.Tid, t =>
        [
            Format.Tid(t.Tid), t.Name, .. t.Ns.Select(n => (Cell)Units.Ms(n)),
            Units.Ms(t.SourceNs[(int)WakeSource.PeerThread]), Units.Ms(t.SourceNs[(int)WakeSource.OtherProcess]),
            Units.Ms(t.SourceNs[(int)WakeSource.Signal]),
            Units.Ms(t.SourceNs[(int)WakeSource.HardIrq] + t.SourceNs[(int)WakeSource.SoftIrq]),
        ]);
        return
        [
            new MarkdownText("## Waits by class", "", intro, ""),
            new TerminalLine($"[bold]Waits by class[/] {Units.Ms(total)} ms: " + Format.Escape(
                string.Join(", ", w.Classes.Select((c, i) => $"{c} {Units.Ms(w.Ns[i])}"))) +
                (w.Stacks is { } ts
                    ? " ms [grey](" + Format.Escape(ts.Moves.Count == 0
                        ? "stacks changed no class"
                        : $"stack tags moved {Units.Ms(ts.Moves.Sum(m => m.Ns))} ms, most {ts.Moves[0].From} → " +
                          $"{ts.Moves[0].To} ({ts.Moves[0].Tag})") + "; docs/metrics.md#wait-stack-tags)[/]"
                    : " ms [grey](no stacks; docs/metrics.md#wait-classes)[/]")),
            new TableBlock(byProcess),
            new TableBlock(byThread),
        ];
    }
}
