using System.Globalization;
using Spectre.Console;
using TraceLab.Capture.Linux;
using TraceLab.Cli.Commands;
using TraceLab.Reporting;
using TraceLab.TestSupport;
using Xunit;
using Xunit.Abstractions;

namespace TraceLab.IntegrationTests;

/// <summary>
/// TraceLab's per-thread numbers for a real capture agree with an independent oracle computed from
/// `trace-cmd report` text (<see cref="TraceCmdReportOracle"/>), on traces that have broken switch chains.
/// </summary>
public sealed class RunTimeAgreementTests
{
    private const double RelativeTolerance = 0.01;
    private const long AbsoluteToleranceNs = 50_000;

    private readonly ITestOutputHelper _output;

    public RunTimeAgreementTests(ITestOutputHelper output) => _output = output;

    [TracingFact(needsTraceCmd: true)]
    public Task Run_time_and_switch_counts_agree_with_trace_cmd_report_for_mutex_and_cs() =>
        CaptureAndCompare(("mutex", "20000"), ("cs", "2000000"));

    private async Task CaptureAndCompare(params (string Scenario, string Iterations)[] scenarios)
    {
        var failures = new List<string>();
        foreach (var (scenario, iterations) in scenarios)
            failures.AddRange(await CaptureAndCompare(scenario, iterations));
        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    private async Task<List<string>> CaptureAndCompare(string scenario, string iterations)
    {
        var dir = RepoPaths.NewTempDirectory($"tracelab-agreement-{scenario}");
        var failures = new List<string>();
        try
        {
            var console = AnsiConsole.Create(new AnsiConsoleSettings { Out = new AnsiConsoleOutput(TextWriter.Null) });
            var settings = new TraceCommand.Settings(
                "timemutex", scenario, new Dictionary<string, string> { ["iterations"] = iterations }, dir, Force: true,
                BufferKb: 64 * 1024, Syscalls: SyscallSet.Lock, TimeoutSeconds: 300);
            var exit = await new TraceCommand(console).RunAsync(settings);
            Assert.Equal(0, exit);

            var report = ReportJson.Deserialize(await File.ReadAllTextAsync(Path.Combine(dir, "report.json")));
            var oracle = TraceCmdReportOracle.FromTraceDat(Path.Combine(dir, "trace.dat"));

            Assert.True(oracle.HasBegin && oracle.HasEnd, $"{scenario}: trace-cmd report shows no TRACELAB_REGION markers");
            Assert.Equal("markers", report.Region.Source);
            Assert.Equal(oracle.Begin, report.Region.BeginNs);
            Assert.Equal(oracle.End, report.Region.EndNs);
            Assert.Equal(oracle.SwitchLines, report.Capture.SwitchEvents);
            Assert.NotEmpty(report.Threads);

            _output.WriteLine($"timemutex {scenario} --iterations {iterations}: region {report.Region.DurationNs} ns, " +
                $"{oracle.SwitchLines} sched_switch lines, chain breaks: TraceLab {report.Capture.ChainBreaks}, oracle {oracle.ChainBreaks}");
            double maxRelative = 0;
            foreach (var t in report.Threads)
            {
                var o = oracle.Of(t.Tid);
                var diff = Math.Abs(t.RunNs - o.RunNs);
                var relative = o.RunNs > 0 ? diff / (double)o.RunNs : diff == 0 ? 0 : double.PositiveInfinity;
                if (o.RunNs >= AbsoluteToleranceNs / RelativeTolerance) maxRelative = Math.Max(maxRelative, relative);
                _output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"  {t.Tid,7} {t.Role ?? t.Name,-10} run {t.RunNs,12} oracle {o.RunNs,12} diff {diff,9} ({relative:P4})  " +
                    $"vol {t.VoluntarySwitches}/{o.Voluntary} invol {t.InvoluntarySwitches}/{o.Involuntary} repaired {t.RepairedStarts}/{o.RepairedStarts}"));

                var tolerance = Math.Max(RelativeTolerance * o.RunNs, AbsoluteToleranceNs);
                if (diff > tolerance)
                    failures.Add($"{scenario}: tid {t.Tid} ({t.Role}) run {t.RunNs} ns vs oracle {o.RunNs} ns: off by {diff} ns > {tolerance:0} ns");
                if (t.VoluntarySwitches != o.Voluntary || t.InvoluntarySwitches != o.Involuntary)
                    failures.Add($"{scenario}: tid {t.Tid} ({t.Role}) switches voluntary {t.VoluntarySwitches}/involuntary {t.InvoluntarySwitches} " +
                        $"vs oracle {o.Voluntary}/{o.Involuntary}");
            }
            _output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  max relative run-time difference (threads with run >= 5 ms): {maxRelative:P4}"));
        }
        finally
        {
            try { Directory.Delete(dir, recursive: true); }
            catch (IOException) { }
        }
        return failures;
    }
}
