using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Cli;
using TraceLab.Formats.Registry;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.IntegrationTests;

/// <summary>
/// `trace --system` on a busy machine (system overview, real-system robustness): two lock-bound sysbench processes and
/// three stress-ng CPU hogs. The overview's figures per process are checked against an independent reading of the same
/// trace.dat (trace-cmd report, <see cref="TraceCmdReportOracle"/>), and its ranking against the oracle's keys.
/// </summary>
public sealed partial class TraceTargetCaptureTests
{
    [TracingProgramFact("sysbench", "stress-ng")]
    public void System_overview_ranks_busy_processes_as_an_independent_reading_of_the_trace_does()
    {
        using var dir = new TempDirectory("tracelab-overview");
        using var a = Background("sysbench", "threads", "--threads=4", "--thread-locks=1", "--time=60", "run");
        using var b = Background("sysbench", "threads", "--threads=2", "--thread-locks=1", "--time=60", "run");
        using var hogs = Background("stress-ng", "--cpu", "3", "--timeout", "60");
        // A shell starting a short process every 50 ms: the trace has more processes than the terminal's table
        // shows on any machine (a fresh CI machine runs few others), so the "more processes" note is always due.
        using var forks = Background("sh", "-c", "while :; do sleep 0.05; done");
        Processes.WaitFor(() => Tasks(a.Id).Count >= 5 && Tasks(b.Id).Count >= 3 ? "" : null,
            TimeSpan.FromSeconds(10), "sysbench threads");
        Thread.Sleep(300); // stress-ng forks its workers
        var run = Run(Deadline, null, "trace", "--system", "--duration", "2", "--top", "2", "--out", dir.Path,
            "--force");
        a.Kill();
        b.Kill();
        hogs.Kill();
        forks.Kill();
        Assert.True(run.ExitCode == 0, run.Stderr);
        var report = Load(dir.Path);
        Report(report, "--system --top 2");
        var oracle = TraceCmdReportOracle.FromTraceDat(Path.Combine(dir.Path, "trace.dat"));

        var busy = report.Processes.Where(p => p.Pid == a.Id || p.Pid == b.Id
            || p.Name.StartsWith("stress-ng", StringComparison.Ordinal) && p.RunNs > 100_000_000).ToList();
        Assert.Contains(busy, p => p.Pid == a.Id);
        Assert.Contains(busy, p => p.Pid == b.Id);
        Assert.True(busy.Count >= 4, string.Join("; ", busy.Select(p => $"{p.Pid} {p.Name}")));
        foreach (var p in busy)
        {
            var tids = report.Threads.Where(t => t.Pid == p.Pid).Select(t => t.Tid).ToList();
            var run_ = tids.Sum(t => oracle.Of(t).RunNs);
            var ready = tids.Sum(t => oracle.Of(t).ReadyNs);
            var futex = tids.Sum(t => oracle.Of(t).FutexBlockedNs);
            output.WriteLine(
                $"{p.Pid} {p.Name}: run {Ms(p.RunNs)} / {Ms(run_)}, ready {Ms(p.ReadyNs)} / {Ms(ready)}, " +
                $"lock blocked {Ms(p.LockBlockedNs)} / futex blocked {Ms(futex)} ms (TraceLab / trace-cmd)");
            Near(p.RunNs, run_, 0.02, 2_000_000, $"{p.Name} run");
            Near(p.ReadyNs, ready, 0.05, 5_000_000, $"{p.Name} ready");
            Near(p.LockBlockedNs, futex, 0.05, 5_000_000, $"{p.Name} lock blocked");
        }
        // The ranking: the lock-bound processes (the oracle sees them blocked in futex calls, the CPU hogs never)
        // first; the hogs (no lock wait) after them, in the order of the oracle's ready time. Two hogs on the same
        // CPUs can have ready times a few milliseconds apart, closer than the two readings agree (the 5 % above):
        // there an order is as right as its reverse, so each next hog must not have more ready time by the oracle
        // than the one before it beyond that tolerance.
        var byReport = report.Processes.Select(p => p.Pid).Where(busy.Select(x => x.Pid).Contains).ToList();
        Assert.Equal([a.Id, b.Id], byReport.Take(2).Order());
        Assert.All(byReport.Take(2), pid => Assert.True(Sum(report, oracle, pid, t => t.FutexBlockedNs) > 0));
        var hogReady =
            byReport.Skip(2).Select(pid => (Pid: pid, Ready: Sum(report, oracle, pid, t => t.ReadyNs))).ToList();
        for (var i = 1; i < hogReady.Count; i++)
        {
            var (before, next) = (hogReady[i - 1], hogReady[i]);
            Assert.True(next.Ready <= before.Ready + Math.Max(0.05 * before.Ready, 5_000_000),
                $"{next.Pid} (oracle ready {Ms(next.Ready)} ms) ranked after {before.Pid} ({Ms(before.Ready)} ms)");
        }
        Assert.All(byReport.Skip(2), pid => Assert.Equal(0, Sum(report, oracle, pid, t => t.FutexBlockedNs)));

        // What the user sees: the overview first, two detailed sections, a short terminal.
        Assert.NotNull(report.System);
        Assert.Equal(report.Processes.Take(2).Select(p => p.Pid), report.System!.DetailedPids);
        var md = File.ReadAllText(Path.Combine(dir.Path, "report.md"));
        Assert.True(md.IndexOf("## Findings", StringComparison.Ordinal) < md.IndexOf(
            "## System overview", StringComparison.Ordinal));
        Assert.Equal(2, md.Split('\n').Count(l => l.StartsWith("## Process ", StringComparison.Ordinal)));
        var lines = run.Stdout.Split('\n');
        output.WriteLine($"terminal: {lines.Length} lines; report.md {md.Length:N0} chars");
        Assert.True(lines.Length < 250, $"{lines.Length} terminal lines");
        Assert.True(report.Processes.Count > TerminalReport.TableRows, $"{report.Processes.Count} processes");
        var more = $"… {report.Processes.Count - TerminalReport.TableRows} more processes in report.md";
        Assert.Contains(lines, l => l.Contains(more, StringComparison.Ordinal));
        Assert.DoesNotContain(report.Threads, t => t.Tid == 0);

        SecondPassReplaysWhatTheTraceHolds(Path.Combine(dir.Path, "trace.dat"));
        RedundantEvidenceChangesNothing(Path.Combine(dir.Path, "trace.dat"));
    }

    /// <summary>
    /// The unmodelled events the passes leave out (RedundantEvidenceFilter, docs/architecture.md#unmodelled-events)
    /// change no result on a busy system's trace: the same report.json and focused timeline without the filter.
    /// </summary>
    private void RedundantEvidenceChangesNothing(string trace)
    {
        long leftOut;
        using (var reader = TraceFormats.All.Open(trace, TraceReadOptions.Default))
            leftOut = RedundantEvidenceFilter.LeftOutOf(reader);
        output.WriteLine($"redundant evidence: {leftOut:N0} events left out");
        Assert.True(leftOut > 0);
        var (with, without) = (Analyze(trace, leaveOut: true), Analyze(trace, leaveOut: false));
        Assert.Equal(ReportJson.Serialize(without.Report), ReportJson.Serialize(with.Report));
        TimelineAssert.Same(without.Timeline!, with.Timeline!);
    }

    /// <summary>A system report with its focused timeline, the analyses beside the reading thread.</summary>
    private static AnalysisResult Analyze(string trace, bool journal = true, bool leaveOut = true) =>
        TraceAnalysis.Run(new AnalysisRequest(trace)
        {
            Timeline = TimelineWindow.Default,
            FocusTimeline = true,
            AnalysisThreads = 1,
            JournalForTimeline = journal,
            LeaveOutRedundantEvidence = leaveOut,
        });

    /// <summary>
    /// A system report's focused timeline (the first finding's worst window, found after the pass) is recorded from
    /// the first pass's event journal (docs/performance.md#event-journal) when the analyses ran beside the reading
    /// thread, and it is the recording a second read of the trace makes, item for item and in order.
    /// </summary>
    private void SecondPassReplaysWhatTheTraceHolds(string trace)
    {
        var replayed = Analyze(trace, journal: true);
        var read = Analyze(trace, journal: false);
        Assert.Equal("replay", replayed.SecondPass);
        Assert.Equal("trace", read.SecondPass);
        var (a, b) = (replayed.Timeline!, read.Timeline!);
        output.WriteLine($"focused timeline {a.Window}: {a.Segments.Count} segments, {a.Wakes.Count} wakeups, " +
            $"{a.Handoffs.Count} handoffs, {a.Episodes.Count} convoy episodes, from the journal and from the trace");
        Assert.True(a.Segments.Count > 0);
        TimelineAssert.Same(b, a);
    }

    private static long Sum(RunReport r, TraceCmdReportOracle oracle, int pid,
        Func<TraceCmdReportOracle.ThreadResult, long> figure) =>
        r.Threads.Where(t => t.Pid == pid).Sum(t => figure(oracle.Of(t.Tid)));

    private static void Near(long actual, long expected, double relative, long absoluteNs, string what) =>
        Assert.True(Math.Abs(actual - expected) <= Math.Max(relative * expected, absoluteNs),
            $"{what}: TraceLab {Ms(actual)} ms, trace-cmd {Ms(expected)} ms");

    private static string Ms(long ns) => (ns / 1e6).ToString("0.0", CultureInfo.InvariantCulture);
}
