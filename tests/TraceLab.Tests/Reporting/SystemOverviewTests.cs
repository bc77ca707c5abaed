using Spectre.Console;
using TraceLab.Cli;
using TraceLab.Core;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Html;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// Reports without a target (docs/metrics.md#system-overview): the system overview ranks processes by time blocked on
/// lock objects, then ready time; the top N get a section; the terminal stays short; report.md folds the long tail.
/// The trace is hand-built, so every ranking key is known by construction (times in µs):
/// <list type="bullet">
/// <item>500 "locky": FUTEX_WAIT entered at 10, blocked from 20 until 600's FUTEX_WAKE hands it the lock at 320
/// → 300 µs blocked in a lock call, 310 µs in the lock's queue (confirmed by its own FUTEX_WAKE at 345), then
/// ready 320 → 330 (10 µs).</item>
/// <item>600 "ready-heavy": preempted at 400 by 1099, back at 800 → 400 µs ready, no lock.</item>
/// <item>1000 + k (k = 0 … 24) "small-k" on CPU 2: woken from interrupt, ready k + 1 µs.</item>
/// <item>1099 "hog": runs 400 → 800, never waits for a CPU.</item>
/// </list>
/// Expected rank: 500, 600, 1024, 1023, …, 1000, 1099 (28 processes).
/// </summary>
public sealed class SystemOverviewTests
{
    private const long Us = SystemScript.Us;
    private const int Smalls = 25;
    private static readonly (int, string) Idle = (0, "swapper");
    private const int FutexWaitPrivate = 0 | 128, FutexWakePrivate = 1 | 128;

    private static SystemScript Busy()
    {
        var s = new SystemScript();
        (int, string) locky = (500, "locky"), heavy = (600, "ready-heavy"), hog = (1099, "hog");
        s.Switch(0, 0, Idle, TaskState.Running, locky);
        s.Add(KernelEvent.SyscallEnter(10 * Us, 0, 500, 202, 0x1000, FutexWaitPrivate));
        s.Switch(20 * Us, 0, locky, TaskState.Interruptible, Idle);
        s.Switch(0, 1, Idle, TaskState.Running, heavy);
        s.Add(KernelEvent.SyscallEnter(315 * Us, 1, 600, 202, 0x1000, FutexWakePrivate));
        s.Add(KernelEvent.Waking(320 * Us, 1, 600, 500, 0));
        s.Add(KernelEvent.SyscallExit(325 * Us, 1, 600, 202, 1));
        s.Switch(330 * Us, 0, Idle, TaskState.Running, locky);
        s.Add(KernelEvent.SyscallExit(340 * Us, 0, 500, 202, 0));
        s.Add(KernelEvent.SyscallEnter(345 * Us, 0, 500, 202, 0x1000, FutexWakePrivate));   // releases: it had it
        s.Add(KernelEvent.SyscallExit(347 * Us, 0, 500, 202, 0));
        s.Switch(350 * Us, 0, locky, TaskState.Interruptible, Idle);
        s.Switch(400 * Us, 1, heavy, TaskState.Running, hog);
        s.Switch(800 * Us, 1, hog, TaskState.Interruptible, heavy);
        s.Switch(900 * Us, 1, heavy, TaskState.Interruptible, Idle);
        for (var k = 0; k < Smalls; k++)
        {
            var t0 = 40 * k * Us;
            (int, string) small = (1000 + k, $"small-{k}");
            s.Add(KernelEvent.Waking(t0, 2, 0, 1000 + k, 2).WithInterruptFlag());
            s.Switch(t0 + (k + 1) * Us, 2, Idle, TaskState.Running, small);
            s.Switch(t0 + (k + 3) * Us, 2, small, TaskState.Interruptible, Idle);
        }
        return s;
    }

    private static readonly int[] ExpectedRank =
        [500, 600, .. Enumerable.Range(1000, Smalls).Reverse(), 1099];

    [Fact]
    public void Processes_rank_by_lock_wait_then_ready_time_with_their_switches_and_cpu_use()
    {
        var r = Busy().Report(cpus: 3);

        Assert.True(r.Processes.Count == ExpectedRank.Length,
            string.Join(", ", r.Processes.Select(p => $"{p.Pid} {p.Name} {p.ReadyNs}")));
        Assert.NotNull(r.System);
        Assert.Null(r.RestOfSystem);
        Assert.Equal(ExpectedRank, r.Processes.Select(p => p.Pid));
        var locky = r.Processes[0];
        Assert.Equal(300 * Us, locky.LockBlockedNs);
        Assert.Equal(310 * Us, locky.LockWaitNs);                 // queued at its FUTEX_WAIT (10), handed it at 320
        Assert.Equal(10 * Us, locky.ReadyNs);
        Assert.Equal(20 * Us + 20 * Us, locky.RunNs);            // 0 → 20 and 330 → 350
        Assert.Equal(2, locky.VoluntarySwitches);
        var heavy = r.Processes[1];
        Assert.Equal(0, heavy.LockBlockedNs + heavy.LockWaitNs);
        Assert.Equal(400 * Us, heavy.ReadyNs);
        Assert.Equal(1, heavy.InvoluntarySwitches);
        Assert.Equal(1, heavy.VoluntarySwitches);
        for (var k = 0; k < Smalls; k++)
            Assert.Equal((k + 1) * Us, r.Processes.Single(p => p.Pid == 1000 + k).ReadyNs);
        // CPU time used is the sum of every thread's run time; capacity is CPUs × region.
        Assert.Equal(r.Threads.Sum(t => t.RunNs), r.System!.BusyNs);
        Assert.Equal(3 * r.Region.DurationNs, r.System.CpuCapacityNs);
        Assert.Equal([500, 600, 1024], r.System.DetailedPids);
    }

    [Fact]
    public void The_terminal_shows_ten_ranked_processes_then_the_top_three_and_stays_short()
    {
        var r = Busy().Report(cpus: 3);
        var lines = Terminal(r);

        var header =
            Array.FindIndex(lines, l => l.StartsWith('│') && l.Split('│', StringSplitOptions.TrimEntries)[1] == "#");
        var pids = lines.Skip(header + 2).TakeWhile(l => l.StartsWith('│'))
            .Select(l => int.Parse(
                l.Split('│', StringSplitOptions.TrimEntries)[2], System.Globalization.CultureInfo.InvariantCulture))
            .ToList();
        Assert.Equal(ExpectedRank.Take(10), pids);
        Assert.Contains(lines, l => l.Contains("… 18 more processes in report.md", StringComparison.Ordinal));
        var sections = lines.Where(l => l.StartsWith("Process ", StringComparison.Ordinal)).ToList();
        Assert.Equal(3, sections.Count);
        Assert.StartsWith("Process 500 locky (#1)", sections[0], StringComparison.Ordinal);
        Assert.True(lines.Length < 200, $"{lines.Length} lines");
        var widest = lines.Where(l => l.TrimStart().Length > 0 && "╭│├╰".Contains(l.TrimStart()[0]))
            .MaxBy(l => l.TrimEnd().Length)!;
        Assert.True(widest.TrimEnd().Length <= 160, widest.TrimEnd().Length + "\n" + string.Join("\n", lines));
        // The sections after the overview show only the top processes' threads, and say so.
        Assert.Contains(lines, l => l.Contains("more threads (report.md: the top processes' threads; report.json: all)",
            StringComparison.Ordinal));
    }

    [Fact]
    public void Report_md_opens_with_the_overview_folds_the_long_tail_and_html_keeps_it_collapsed()
    {
        var r = Busy().Report(cpus: 3, top: 2);
        var md = ReportMarkdown.Render(r);

        var overview = md.IndexOf("## System overview", StringComparison.Ordinal);
        var first = md.IndexOf("## Process 500 locky (#1)", StringComparison.Ordinal);
        var second = md.IndexOf("## Process 600 ready-heavy (#2)", StringComparison.Ordinal);
        var threads = md.IndexOf("## Threads", StringComparison.Ordinal);
        Assert.True(overview > 0 && overview < first && first < second && second < threads, md);
        Assert.DoesNotContain("## Process 1024", md, StringComparison.Ordinal);
        Assert.Contains("<summary>8 more processes</summary>", md, StringComparison.Ordinal);
        // The Threads section lists the two top processes' threads only.
        var threadRows = md[threads..].Split('\n')
            .TakeWhile(l => !l.StartsWith("## ", StringComparison.Ordinal) || l == "## Threads")
            .Where(l => l.StartsWith("| ", StringComparison.Ordinal) && char.IsAsciiDigit(l[2])).ToList();
        Assert.Equal(2, threadRows.Count);
        Assert.Contains(
            "… 26 more threads of other processes: report.json has every thread.", md, StringComparison.Ordinal);
        // report.json keeps every thread.
        Assert.Equal(28, r.Threads.Count);

        var html = MarkdownHtml.Convert(md);
        Assert.Contains("<details>\n<summary>8 more processes</summary>", html, StringComparison.Ordinal);
    }

    [Fact]
    public void The_overview_and_top_survive_the_json_round_trip()
    {
        var r = Busy().Report(cpus: 3, top: 1);
        var back = ReportJson.Deserialize(ReportJson.Serialize(r));

        Assert.Equal(ReportMarkdown.Render(r), ReportMarkdown.Render(back));
        Assert.Equal([500], back.System!.DetailedPids);
    }

    [Fact]
    public void A_report_with_a_target_has_no_overview()
    {
        var r = Busy().Report(cpus: 3);
        Assert.NotNull(r.System);
        var md = ReportMarkdown.Render(new RunReport
        {
            Capture = r.Capture,
            Region = r.Region,
            Threads = r.Threads,
            Processes = r.Processes,
            RestOfSystem = new RestOfSystemSection(),
        });
        Assert.DoesNotContain("## System overview", md, StringComparison.Ordinal);
    }

    /// <summary>Real system-wide traces recorded elsewhere: 8 and 20 CPUs, many processes.</summary>
    [ExternalTraceFact("tracecmd/lisa_trappy_tests_trace_v6.dat")]
    public void An_eight_cpu_android_trace_fits_the_terminal() =>
        FitsTheTerminal("tracecmd/lisa_trappy_tests_trace_v6.dat");

    [ExternalTraceFact("tracecmd/hip24_test_host_kvm_v7zlib.dat")]
    public void A_twenty_cpu_host_trace_with_silent_cpus_fits_the_terminal() =>
        FitsTheTerminal("tracecmd/hip24_test_host_kvm_v7zlib.dat");

    private static void FitsTheTerminal(string trace)
    {
        var r = TraceAnalysis.Analyze(ExternalTraces.PathOf(trace), null, pid: null);
        var lines = Terminal(r);

        Assert.NotNull(r.System);
        var tables = lines.Where(l => l.TrimStart().Length > 0 && "╭│├╰".Contains(l.TrimStart()[0])).ToList();
        var widest = tables.MaxBy(l => l.TrimEnd().Length)!;
        Assert.True(widest.TrimEnd().Length <= 160, widest);
        Assert.True(lines.Length < 200, $"{lines.Length} lines");
        // Every table shows at most 10 rows (plus borders and heading: 14 lines between ╭ and ╰).
        var open = -1;
        for (var i = 0; i < lines.Length; i++)
        {
            if (lines[i].TrimStart().StartsWith('╭')) open = i;
            if (lines[i].TrimStart().StartsWith('╰')) Assert.True(i - open - 3 <= 10, $"{i - open - 3} rows");
        }
        Assert.Equal(r.Threads.Sum(t => t.RunNs), r.System!.BusyNs);
        Assert.All(r.System.SilentCpus, c => Assert.InRange(c, 0, r.Capture.Cpus - 1));
    }

    internal static string[] Terminal(RunReport r)
    {
        var text = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(text),
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
        });
        console.Profile.Width = 220;
        TerminalReport.Render(console, r);
        return text.ToString().Split('\n');
    }
}

internal static class InterruptEvents
{
    /// <summary>A wakeup from interrupt context (ftrace common_flags: hard IRQ).</summary>
    public static KernelEvent WithInterruptFlag(this KernelEvent e)
    {
        e.Flags = EventFlags.HardIrq;
        return e;
    }
}
