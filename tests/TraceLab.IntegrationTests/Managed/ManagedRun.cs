using TraceLab.Analyzers.Waits;
using TraceLab.Reporting;
using TraceLab.Reporting.Waits;

namespace TraceLab.IntegrationTests.Managed;

/// <summary>A program traced with `trace --stacks`, its report, and the report's figures the managed-lock tests read.
/// </summary>
internal sealed record ManagedRun(string Stdout, RunReport Report, WaitsSection Waits)
{
    /// <summary>Traces <paramref name="command"/> with stacks into <paramref name="outDir"/>; fails on a non-zero exit.
    /// </summary>
    public static ManagedRun Trace(ITestOutputHelper output, string outDir, params string[] command)
    {
        var run = TraceTargetCaptureTests.Run(TimeSpan.FromSeconds(120), null,
            ["trace", "--stacks", "--out", outDir, "--force", "--", .. command]);
        Assert.True(run.ExitCode == 0, run.Stderr);
        var report = ReportJson.Deserialize(File.ReadAllText(Path.Combine(outDir, "report.json")));
        output.WriteLine($"{Path.GetFileName(outDir)}: events {report.Capture.Events:N0}, lost "
            + $"{report.Capture.LostEvents:N0}, findings: "
            + string.Join("; ", (report.Findings ?? []).Select(f => $"{f.Severity:P1} {f.Kind}")));
        return new ManagedRun(run.Stdout, report,
            Assert.IsType<WaitsSection>(report.SectionOf(AnalysisReports.Of<WaitsReport>())));
    }

    /// <summary>The program's last line of output (its own figures, as JSON).</summary>
    public string LastLine => Stdout.Trim().Split('\n')[^1];

    /// <summary>A thread's lock-class blocked time, ns (0 when it never blocked).</summary>
    public long LockNs(int tid) =>
        Waits.Threads.FirstOrDefault(t => t.Tid == tid)?.Ns[Waits.Classes.IndexOf(WaitClasses.Name(WaitClass.Lock))]
        ?? 0;

    /// <summary>The futex waits (count, ms) whose blocking stack has a function containing <paramref name="name"/>.
    /// </summary>
    public (long Waits, double Ms) BlockedUnder(string name)
    {
        var stacks = Report.Stacks!.Locks.SelectMany(l => l.Blocking)
            .Where(b => b.Frames.Any(f => f.Symbol?.Contains(name, StringComparison.Ordinal) == true)).ToList();
        return (stacks.Sum(b => b.Count), stacks.Sum(b => b.Ms));
    }
}
