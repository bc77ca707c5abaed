using System.Globalization;
using System.Text.Json;
using Spectre.Console;
using TraceLab.Cli.Commands;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Claims;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.IntegrationTests;

/// <summary>
/// `claims --run --trace` on a tiny throttle sweep (th1's rules at M and 2M active only, 8× fewer threads, 1/300 of
/// the work): every run is really captured and analyzed, so TH2's traced aspect is judged instead of "not tested".
/// </summary>
public sealed class ClaimsTracedTests
{
    [TracingFact]
    public async Task A_traced_claims_run_judges_th2s_traced_aspect_from_each_runs_report()
    {
        using var tmp = new TempDirectory("claims-traced");
        var dir = ClaimsRunPlan.ModeDirectory(tmp.Path, quick: false, traced: true);
        var th1 = PredefinedSweeps.Find("throttle", "th1")!;
        var m = Environment.ProcessorCount;
        var tiny = new SweepDefinition
        {
            Name = th1.Name,
            Workload = th1.Workload,
            Title = th1.Title,
            Claims = th1.Claims,
            XParameter = th1.XParameter,
            Verdicts = th1.Verdicts,
            XValues = [I(m), I(2 * m)],
            Base = new Dictionary<string, string> { ["threads"] = I(4 * m), ["chunk"] = "100000", ["repeat"] = "2" },
        };
        var log = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(log),
            Interactive = InteractionSupport.No,
            Ansi = AnsiSupport.No,
        });
        var run = new ClaimsRun(console, dir, quick: false, TimeSpan.FromSeconds(120), traced: true)
        {
            Sweeps = [tiny],
        };
        Assert.True(await run.RunAsync(CancellationToken.None), log.ToString());

        var state = SweepStateStore.Load(Path.Combine(dir, "th1"));
        Assert.True(state.Traced);
        Assert.Equal(6, state.Runs.Count(r => r.Ok));
        foreach (var r in state.Runs)
        {
            var runDir = Path.Combine(dir, "th1", r.Directory!);
            // Each run's report stays; its trace does not (696 of them would take tens of GB).
            Assert.False(File.Exists(Path.Combine(runDir, "trace.dat")));
            using var report = JsonDocument.Parse(File.ReadAllText(Path.Combine(runDir, "report.json")));
            var workers = report.RootElement.GetProperty("threads").EnumerateArray()
                .Where(t => t.TryGetProperty("role", out var role)
                    && role.GetString()!.StartsWith("worker", StringComparison.Ordinal)).ToList();
            Assert.Equal(4 * m, workers.Count);
            // Independent of TracedMetrics: the mean of the workers' involuntary switches in the run's report.json.
            Assert.Equal(workers.Average(t => t.GetProperty("involuntarySwitches").GetDouble()),
                r.Traced["involPerThread"], 9);
        }

        var claims = ClaimsReportBuilder.Build(dir, quick: false, MachineInfo.Current(), traced: true);
        var th2 = claims.Claims.Single(c => c.Claim.Id == "TH2");
        var traced = th2.Aspects.Single(a => a.Aspect.EndsWith("(trace)", StringComparison.Ordinal));
        // Decided either way from the traced figures (before: "not tested", no run had them).
        Assert.Contains(traced.Outcome,
            new[] { VerdictOutcome.Reproduced, VerdictOutcome.NotReproduced, VerdictOutcome.Inverted });
        Assert.Contains("traced", ClaimsReportMarkdown.Write(claims, DateTimeOffset.UtcNow), StringComparison.Ordinal);
    }

    private static string I(int v) => v.ToString(CultureInfo.InvariantCulture);
}
