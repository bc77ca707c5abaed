using Spectre.Console;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Sections;
using TraceLab.Reporting.Tables;
using TraceLab.Workloads;

namespace TraceLab.Tests.Reporting;

/// <summary>Reports of busy systems rank instead of dumping: terminal top-10, sparse who-woke-whom.</summary>
public sealed class BusySystemReportTests
{
    private const string BusyPerf = "tracecmd/lisa_trappy_tests_trace_v6.dat"; // 50 threads

    /// <summary>A report of <paramref name="n"/> threads whose ready time is (tid * 7919) mod 1000 ms.</summary>
    private static RunReport ManyThreads(int n) => new()
    {
        Capture = new CaptureSection { Backend = "perf", TraceFile = "busy.perf.data" },
        Region = new RegionSection { Source = "whole-trace" },
        Analyses = ["threads"],
        Threads = Enumerable.Range(1, n).Select(tid => new ThreadSection
        {
            Tid = tid,
            Name = $"worker-{tid}", // a comm: at most 15 characters
            ReadyNs = tid * 7919L % 1000 * 1_000_000,
            ReadyLatency = new LatencySection(),
        }).ToList(),
    };

    [Fact]
    public void The_terminal_shows_the_ten_threads_with_most_ready_time_in_that_order_and_says_how_many_are_left()
    {
        var report = ManyThreads(1000);
        var text = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(text),
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
        });
        console.Profile.Width = 220;

        TerminalReport.Render(console, report);

        var lines = text.ToString().Split('\n');
        var expected = report.Threads.OrderByDescending(t => t.ReadyNs).ThenBy(t => t.Tid).Take(10)
            .Select(t => t.Tid).ToList();
        var shown = lines.Where(l => l.StartsWith('│'))
            .Select(l => l.Split('│', StringSplitOptions.TrimEntries)[1])
            .Where(c => int.TryParse(c, out _)).Select(int.Parse).ToList();
        Assert.Equal(expected, shown);
        Assert.Contains(lines, l => l.Contains("… 990 more threads in report.md", StringComparison.Ordinal));
        Assert.True(lines.Length < 40, $"{lines.Length} lines");
        Assert.True(lines.Max(l => l.TrimEnd().Length) <= 160, $"{lines.Max(l => l.TrimEnd().Length)} columns");
    }

    [Fact]
    public void Report_md_keeps_every_row_in_table_order()
    {
        var report = ManyThreads(300);
        var md = ReportMarkdown.Render(report);
        var rows = md.Split('\n').Where(l => l.StartsWith("| ", StringComparison.Ordinal)
            && int.TryParse(l.Split('|', StringSplitOptions.TrimEntries)[1], out _)).ToList();
        Assert.Equal(300, rows.Count);
        Assert.StartsWith("| 1 |", rows[0], StringComparison.Ordinal);
    }

    [Fact]
    public void A_top_k_of_ranked_rows_matches_a_full_sort_and_rows_not_about_threads_keep_their_order()
    {
        var rank = Comparer<int>.Create((a, b) => (a * 37 % 101).CompareTo(b * 37 % 101));
        var table = new ReportTable("t", [new("tid")]);
        var plain = new ReportTable("p", [new("x")]);
        for (var tid = 1; tid <= 100; tid++)
        {
            table.AddForThread(tid, tid.ToString(System.Globalization.CultureInfo.InvariantCulture));
            plain.Add("x");
        }
        var limit = new RowLimit(10, ThreadRank: rank);

        var top = limit.RowsShown(table, null).Select(r => table.RowTids![r]).ToList();

        Assert.Equal(Enumerable.Range(1, 100).OrderByDescending(t => t * 37 % 101).Take(10), top);
        Assert.Equal(Enumerable.Range(0, 10), limit.RowsShown(plain, null));
        Assert.Equal(Enumerable.Range(0, 100), RowLimit.None.RowsShown(table, null));
        Assert.Throws<InvalidOperationException>(() => table.Add("1"));
    }

    /// <summary>Sparse who-woke-whom against the dense matrix and the accounting's own received count.</summary>
    [Fact]
    public void Every_thread_lists_all_its_wakers_sparsely_and_they_add_up_to_its_wakeups_received()
    {
        var dir = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex");
        var workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(dir, "workload.json")), "workload.json");
        var r = TraceAnalysis.Analyze(
            Path.Combine(dir, "trace.dat"), workload, pid: null);
        var w = r.Wakeups!;

        Assert.Equal(0, w.ThreadsNotInMatrix);
        foreach (var t in w.Threads)
        {
            Assert.Equal(r.Threads.Single(x => x.Tid == t.Tid).WakeupsReceived, t.WokenBy.Sum(p => p.Count));
            Assert.DoesNotContain(t.WokenBy, p => p.Count == 0);
            var row = w.Matrix.Single(m => m.Woken == t.Tid);
            for (var i = 0; i < w.Wakers.Count; i++)
            {
                if (w.Wakers[i] is 0) continue;
                Assert.Equal(row.Counts[i], t.WokenBy.SingleOrDefault(p => p.Tid == w.Wakers[i])?.Count ?? 0);
            }
            foreach (var wakee in t.TopWakees)
                Assert.Contains(
                    w.Threads.Single(x => x.Tid == wakee.Tid).WokenBy, p => p.Tid == t.Tid && p.Count == wakee.Count);
        }
    }

    [ExternalTraceFact(BusyPerf)]
    public void Over_ten_threads_the_matrix_has_the_ten_woken_most_and_json_keeps_every_waker()
    {
        var r = TraceAnalysis.Analyze(ExternalTraces.PathOf(BusyPerf), null, pid: null);
        var w = r.Wakeups!;
        Assert.True(w.Threads.Count > WakeupMatrixThreads, $"{w.Threads.Count} threads");

        Assert.Equal(WakeupMatrixThreads, w.Matrix.Count);
        Assert.Equal(w.Threads.Count - WakeupMatrixThreads, w.ThreadsNotInMatrix);
        var received = r.Threads.ToDictionary(t => t.Tid, t => t.WakeupsReceived);
        var leastInMatrix = w.Matrix.Min(m => received[m.Woken]);
        Assert.All(w.Threads.Where(t => w.Matrix.All(m => m.Woken != t.Tid)),
            t => Assert.True(received[t.Tid] <= leastInMatrix));
        Assert.All(w.Threads, t => Assert.Equal(received[t.Tid], t.WokenBy.Sum(p => p.Count)));
        Assert.Contains("wakeups.threads[].wokenBy", ReportMarkdown.Render(r), StringComparison.Ordinal);
    }

    private const int WakeupMatrixThreads = 10;
}
