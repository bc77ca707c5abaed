using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;
using Xunit;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// TraceLab leaves its own processes out of a report on a trace it recorded, and shows their cost once
/// (docs/metrics.md#self-exclusion). The hand-built system trace (times in µs, region = the whole trace, 0 → 500):
/// <list type="bullet">
/// <item>700 "tracelab" and its thread 701 ".NET Finalizer" (listed by TRACELAB_THREADS), and 800 "sh" (the
/// capture guard): the TRACELAB_SELF_PIDS marker names 700 and 800. 700 runs 0 → 100 on CPU 0, 701 runs
/// 100 → 110 and blocks in a futex wait to the end, 800 runs 200 → 250.</item>
/// <item>900 "app" on CPU 1: runs 0 → 300 and 400 → 500.</item>
/// </list>
/// TraceLab's cost, worked out here: 3 threads, run 100 + 10 + 50 = 160 µs = 32.0 % of a CPU over 500 µs; blocked
/// 700: 100 → 500, 701: 110 → 500, 800: 250 → 500 = 1,040 µs.
/// </summary>
public sealed class SelfExclusionTests
{
    private const long Us = SystemScript.Us;
    private static readonly (int, string) Idle = (0, "swapper");
    private const int FutexWaitPrivate = 0 | 128;

    private static SystemScript Trace(bool withSelfMarker)
    {
        var s = new SystemScript();
        (int, string) main = (700, "tracelab"), finalizer = (701, ".NET Finalizer"), guard = (800, "sh"),
            app = (900, "app");
        s.Switch(0, 0, Idle, TaskState.Running, main);
        if (withSelfMarker) s.Add(KernelEvent.Marker(1 * Us, 0, 700, MeasuredRegion.SelfPidsMarker + "700,800"));
        s.Add(KernelEvent.Marker(2 * Us, 0, 700, MeasuredRegion.ThreadsMarker + "700 700,701"));
        s.Switch(100 * Us, 0, main, TaskState.Interruptible, finalizer);
        s.Add(KernelEvent.SyscallEnter(105 * Us, 0, 701, 202, 0x2000, FutexWaitPrivate));
        s.Switch(110 * Us, 0, finalizer, TaskState.Interruptible, Idle);
        s.Switch(200 * Us, 0, Idle, TaskState.Running, guard);
        s.Switch(250 * Us, 0, guard, TaskState.Interruptible, Idle);
        s.Switch(0, 1, Idle, TaskState.Running, app);
        s.Switch(300 * Us, 1, app, TaskState.Interruptible, Idle);
        s.Switch(400 * Us, 1, Idle, TaskState.Running, app);
        s.Switch(500 * Us, 1, app, TaskState.Interruptible, Idle);
        return s;
    }

    private static readonly int[] Own = [700, 701, 800];

    [Fact]
    public void TraceLabs_processes_are_in_no_table_and_their_cost_is_summed_once()
    {
        var r = Trace(withSelfMarker: true).Report();

        Assert.Equal([900], r.Threads.Select(t => t.Tid));
        Assert.Equal([900], r.Processes.Select(p => p.Pid));
        Assert.Equal([900], r.System!.DetailedPids);
        Assert.DoesNotContain(r.Findings ?? [], f => f.Threads.Any(Own.Contains));
        Assert.DoesNotContain(r.Convoys?.Objects ?? [], o => o.Participants.Any(Own.Contains));
        var self = Assert.IsType<SelfCostSection>(r.Self);
        Assert.Equal([700, 800], self.Pids);
        Assert.Equal(3, self.Threads);
        Assert.Equal(160 * Us, self.RunNs);
        Assert.Equal(0, self.ReadyNs);
        Assert.Equal(400 * Us + 390 * Us + 250 * Us, self.WaitNs);
        // The busy time is the machine's: TraceLab's run time is in it.
        Assert.Equal(160 * Us + 400 * Us, r.System.BusyNs);

        const string line = "tracelab (pid 700, 800): 32.0 % of a CPU, 3 threads, not analysed";
        Assert.Equal(line, SelfExclusion.Line(r));
        var md = ReportMarkdown.Render(r);
        Assert.Equal(1, Occurrences(md, "not analysed"));
        Assert.Contains(line, md, StringComparison.Ordinal);
        // report.json round-trips it.
        var back = ReportJson.Deserialize(ReportJson.Serialize(r));
        Assert.Equal(self.RunNs, back.Self!.RunNs);
        Assert.Equal(self.Pids, back.Self.Pids);
    }

    /// <summary>
    /// `--exclude-pid 700` on the trace without the marker: 700 and its listed thread 701 leave every table, their cost
    /// is said once apart from TraceLab's (100 + 10 = 110 µs run = 22.0 % of a CPU; blocked 400 + 390 µs); 800 stays.
    /// </summary>
    [Fact]
    public void Processes_the_user_excludes_are_in_no_table_and_their_cost_is_said_once()
    {
        var r = Trace(withSelfMarker: false).Report(excludePids: [700]);

        Assert.Equal([800, 900], r.Threads.Select(t => t.Tid).Order());
        Assert.DoesNotContain(r.Processes, p => p.Pid == 700);
        Assert.Null(r.Self);
        var excluded = Assert.IsType<SelfCostSection>(r.Excluded);
        Assert.Equal([700], excluded.Pids);
        Assert.Equal(2, excluded.Threads);
        Assert.Equal(110 * Us, excluded.RunNs);
        Assert.Equal(400 * Us + 390 * Us, excluded.WaitNs);
        const string line = "excluded with --exclude-pid (pid 700): 22.0 % of a CPU, 2 threads, not analysed";
        Assert.Equal(line, SelfExclusion.ExcludedLine(r));
        Assert.Contains(line, ReportMarkdown.Render(r), StringComparison.Ordinal);
        Assert.Equal(excluded.RunNs, ReportJson.Deserialize(ReportJson.Serialize(r)).Excluded!.RunNs);
        // Without the option the same trace reports 700's threads with exactly those figures.
        var all = Trace(withSelfMarker: false).Report();
        var p700 = Assert.Single(all.Processes, p => p.Pid == 700);
        Assert.Equal((excluded.RunNs, excluded.WaitNs, excluded.Threads), (p700.RunNs, p700.WaitNs, p700.ThreadCount));
    }

    [Fact]
    public void Without_the_marker_nothing_is_excluded()
    {
        var r = Trace(withSelfMarker: false).Report();

        Assert.Null(r.Self);
        Assert.Equal([700, 701, 800, 900], r.Threads.Select(t => t.Tid).Order());
        Assert.Equal([700, 800, 900], r.Processes.Select(p => p.Pid).Order());
        Assert.DoesNotContain("not analysed", ReportMarkdown.Render(r), StringComparison.Ordinal);
        Assert.DoesNotContain("\"self\"", ReportJson.Serialize(r), StringComparison.Ordinal);
    }

    [Fact]
    public void A_report_about_TraceLabs_own_process_keeps_it()
    {
        var r = Trace(withSelfMarker: true).Report(pid: 700);

        Assert.Equal([700, 701], r.Threads.Select(t => t.Tid).Order());
        Assert.Equal([800], r.Self!.Pids);
        Assert.Equal(1, r.Self.Threads);
        Assert.Equal(50 * Us, r.Self.RunNs);
        Assert.Contains("- tracelab (pid 800): 10.0 % of a CPU, 1 thread, not analysed", ReportMarkdown.Render(r),
            StringComparison.Ordinal);
    }

    private static int Occurrences(string text, string part)
    {
        var n = 0;
        for (var i = text.IndexOf(part, StringComparison.Ordinal); i >= 0;
             i = text.IndexOf(part, i + part.Length, StringComparison.Ordinal)) n++;
        return n;
    }
}
