using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Analyzers;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.IntegrationTests;

/// <summary>
/// TraceLab never reports on itself (docs/metrics.md#self-exclusion): a real `trace --system` while a lock-bound
/// sysbench runs. What is TraceLab's is known outside the report: the pid of the process the test started, and the
/// threads trace-cmd's own reading of trace.dat shows listed for it.
/// </summary>
public sealed partial class TraceTargetCaptureTests
{
    [TracingProgramFact("sysbench", "trace-cmd")]
    public void TraceLabs_own_threads_are_in_no_table_of_a_system_report_and_its_cost_is_said_once()
    {
        using var dir = new TempDirectory("tracelab-self");
        using var contended = Background("sysbench", "threads", "--threads=4", "--thread-locks=1", "--time=60", "run");
        Processes.WaitFor(() => Tasks(contended.Id).Count >= 5 ? "" : null, TimeSpan.FromSeconds(10),
            "sysbench threads");
        var (run, tracelab) =
            RunWithPid(Deadline, null, null, "trace", "--system", "--duration", "2", "--out", dir.Path, "--force");
        contended.Kill();
        Assert.True(run.ExitCode == 0, run.Stderr);
        var report = Load(dir.Path);
        Report(report, "--system, TraceLab left out");
        var traceFile = Path.Combine(dir.Path, "trace.dat");

        // trace-cmd still reads the file, and shows the metadata: TraceLab's pid and its threads.
        var text = ProcessOutput.Run("trace-cmd", "report", "-i", traceFile);
        Assert.True(text.ExitCode == 0, text.Stderr);
        var marker = SelfMarker().Match(text.Stdout);
        Assert.True(marker.Success, "no TRACELAB_SELF_PIDS in trace-cmd report");
        var pids = marker.Groups[1].Value.Split(',').Select(p => int.Parse(p, CultureInfo.InvariantCulture)).ToList();
        Assert.Equal(tracelab, pids[0]);
        var own = Listing().Matches(text.Stdout)
            .Where(m => m.Groups[1].Value == tracelab.ToString(CultureInfo.InvariantCulture))
            .SelectMany(m => m.Groups[2].Value.Split(',')).Select(t => int.Parse(t, CultureInfo.InvariantCulture))
            .Concat(pids).ToHashSet();
        output.WriteLine($"TraceLab: pids {string.Join(",", pids)}, {own.Count} threads listed; report: " +
            $"{report.Self?.Threads} threads, run {Ms(report.Self?.RunNs ?? 0)} ms");

        Assert.Equal(pids, report.Self!.Pids);
        Assert.InRange(report.Self.Threads, 3, 200);
        Assert.True(report.Self.RunNs > 0);
        Assert.DoesNotContain(report.Threads, t => own.Contains(t.Tid) || pids.Contains(t.Pid));
        Assert.DoesNotContain(report.Processes, p => pids.Contains(p.Pid));
        Assert.DoesNotContain(report.Convoys!.Objects, o => o.Participants.Any(own.Contains));
        Assert.DoesNotContain(report.Findings!, f => f.Threads.Any(own.Contains));
        Assert.DoesNotContain(report.WaitGraph!.Edges, e => own.Contains(e.From));
        Assert.DoesNotContain(report.WaitGraph.Knots, k => k.Vertices.Any(own.Contains));
        // The contended program is reported, with its lock waits (its rank depends on what else the machine runs).
        Assert.Contains(report.Processes, p => p.Pid == contended.Id && p.LockWaitNs > 0);
        // The cost, said once in the overview (terminal and report.md).
        var md = File.ReadAllText(Path.Combine(dir.Path, "report.md"));
        Assert.Single(md.Split('\n'), l => l.Contains("not analysed", StringComparison.Ordinal));
        Assert.Single(run.Stdout.Split('\n'), l => l.Contains("not analysed", StringComparison.Ordinal));
        Assert.Contains($"tracelab (pid {string.Join(", ", pids)}): ", md, StringComparison.Ordinal);

        // --exclude-pid on the same trace leaves the contended sysbench out the same way; its cost is its row above.
        var row = report.Processes.Single(p => p.Pid == contended.Id);
        var without =
            TraceAnalysis.Run(new AnalysisRequest(traceFile) { ExcludePids = [contended.Id] }).Report;
        Assert.DoesNotContain(without.Processes, p => p.Pid == contended.Id);
        Assert.DoesNotContain(without.Threads, t => t.Pid == contended.Id);
        Assert.Equal([contended.Id], without.Excluded!.Pids);
        Assert.Equal((row.ThreadCount, row.RunNs, row.WaitNs),
            (without.Excluded.Threads, without.Excluded.RunNs, without.Excluded.WaitNs));
        Assert.Equal(report.Self.RunNs, without.Self!.RunNs);

        // The same trace about TraceLab itself (--pid names it): its threads are there, waiting most of the time,
        // so the exclusion above is what kept them out.
        var itself = TraceAnalysis.Analyze(traceFile, null, tracelab);
        Assert.Contains(itself.Threads, t => own.Contains(t.Tid) && t.WaitNs > 0);
        Assert.DoesNotContain(itself.Self?.Pids ?? [], p => p == tracelab);
    }

    [GeneratedRegex(@"TRACELAB_SELF_PIDS ([\d,]+)")]
    private static partial Regex SelfMarker();
}
