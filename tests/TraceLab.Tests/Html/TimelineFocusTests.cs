using TraceLab.Analyzers.Timeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Findings;
using TraceLab.Reporting.Html;
using Xunit;

namespace TraceLab.Tests.Html;

/// <summary>
/// report.html's timeline of a system report (docs/metrics.md#timeline-focus): the threads of the processes the
/// findings name, in the first finding's worst window; the top processes without findings; every thread of a
/// report about a process. The report is built by hand: process 10 "db" (threads 10, 11, 12), 20 "web" (20, 21),
/// 30 "idle" (30), and the kernel threads group (pid 2: 3, 4, 5), ranked 20, 10, 2, 30.
/// </summary>
public sealed class TimelineFocusTests
{
    private static RunReport Report(bool system, params FindingSection[] findings)
    {
        ThreadSection T(int tid, int pid, string name) => new()
        {
            Tid = tid,
            Pid = pid,
            Name = name,
            ReadyLatency = new LatencySection(),
        };
        ProcessSummary P(int pid, string name, int threads, bool kernel = false) => new()
        {
            Pid = pid,
            Name = name,
            ThreadCount = threads,
            KernelThreads = kernel ? true : null,
        };
        return new RunReport
        {
            Capture = new CaptureSection { Backend = "test", TraceFile = "hand-built" },
            Region = new RegionSection { Source = "target", BeginNs = 0, EndNs = 1_000_000_000 },
            Threads =
            [
                T(3, 2, "kworker/0:1"), T(4, 2, "ksoftirqd/0"), T(5, 2, "rcu_sched"), T(10, 10, "db"),
                T(11, 10, "db"), T(12, 10, "db"), T(20, 20, "web"), T(21, 20, "web"), T(30, 30, "idle"),
            ],
            Processes = [P(20, "web", 2), P(10, "db", 3), P(2, "kernel threads", 3, kernel: true), P(30, "idle", 1)],
            System = system ? new SystemSection { TopProcesses = 2, DetailedPids = [20, 10] } : null,
            Findings = [.. findings],
        };
    }

    private static FindingSection Finding(string kind, int[] threads, params string[] windows) => new()
    {
        Kind = kind,
        Title = kind,
        Remedy = "",
        Threads = [.. threads],
        Windows = [.. windows.Select(TimelineWindow.Parse)],
        Severity = 0.5,
    };

    [Fact]
    public void System_report_shows_the_named_processes_threads_in_the_first_findings_worst_window()
    {
        // The convoy names db's 11 and a kernel thread; the second finding names web's 21.
        var r = Report(system: true, Finding("lock-convoy", [11, 4], "48:16", "16:16"),
            Finding("oversubscription", [21], "0:32"));

        Assert.Equal(new TimelineWindow(48_000_000, 16_000_000), TimelineFocus.Window(r));
        var (rows, why, leftOut) = TimelineFocus.Rows(r);
        // db (the first finding's; before the kernel group by rank), then of the kernel threads only the named one,
        // then web (the second finding's): never the idle process, never kworker or rcu_sched.
        Assert.Equal([10, 11, 12, 4, 20, 21], rows.Select(t => t.Tid));
        Assert.Equal(0, leftOut);
        Assert.Equal("the threads of the processes the findings name: db (10), kernel threads (2), web (20)", why);
    }

    [Fact]
    public void A_first_finding_without_windows_gives_way_to_the_next_that_has_one()
    {
        var r = Report(system: true, Finding("kernel-lock", [11]), Finding("lock-convoy", [12], "5:1"));

        Assert.Equal(new TimelineWindow(5_000_000, 1_000_000), TimelineFocus.Window(r));
    }

    [Fact]
    public void Without_findings_the_top_processes_threads_in_the_window_asked_for()
    {
        var r = Report(system: true);

        Assert.Null(TimelineFocus.Window(r));
        var (rows, why, _) = TimelineFocus.Rows(r);
        Assert.Equal([20, 21, 10, 11, 12], rows.Select(t => t.Tid));
        Assert.StartsWith("no finding names a thread", why, StringComparison.Ordinal);
    }

    [Fact]
    public void A_report_about_a_process_draws_every_reported_thread_in_the_window_asked_for()
    {
        var r = Report(system: false, Finding("lock-convoy", [11], "48:16"));

        Assert.Null(TimelineFocus.Window(r));
        var (rows, why, _) = TimelineFocus.Rows(r);
        Assert.Equal(r.Threads.Select(t => t.Tid), rows.Select(t => t.Tid));
        Assert.Null(why);
    }

    [Fact]
    public void The_page_draws_only_the_focus_rows_and_says_why()
    {
        var r = Report(system: true, Finding("lock-convoy", [11], "48:16"));
        var window = TimelineFocus.Window(r)!.Value;
        var data = new TimelineData
        {
            Window = window,
            Anchor = 0,
            Start = window.StartOffsetNs,
            End = window.StartOffsetNs + window.LengthNs,
            Segments =
            [
                new TimelineSegment(11, ThreadRunState.Running, 50_000_000, 52_000_000, 0),
                new TimelineSegment(3, ThreadRunState.Running, 50_000_000, 52_000_000, 1),
            ],
            Wakes = [],
            Episodes = [],
            Handoffs = [],
            FutileWakeups = [],
        };

        var html = HtmlReport.Render(r, data);
        var timeline = html[html.IndexOf("id=\"thread-timeline\"", StringComparison.Ordinal)..];
        timeline = timeline[..timeline.IndexOf("</table>", StringComparison.Ordinal)];
        Assert.Contains("db (11)", timeline, StringComparison.Ordinal);
        Assert.DoesNotContain("kworker/0:1", timeline, StringComparison.Ordinal);
        Assert.DoesNotContain("web (20)</text>", timeline, StringComparison.Ordinal);
        Assert.Contains("Rows: the threads of the processes the findings name: db (10); window: where the first " +
            "finding is worst.", timeline, StringComparison.Ordinal);
    }
}
