using System.Globalization;
using Spectre.Console;
using TraceLab.Cli.Commands;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Claims;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.Tests.Cli;

/// <summary>`claims --run` with a fake point runner: interrupted twice, continued, every point measured once.</summary>
public sealed class ClaimsRunTests
{
    /// <summary>Records every call (sweep, point, repeat; −1 = calibration pilot); cancels at a chosen call.</summary>
    private sealed class CountingRunner : IPointRunner
    {
        private readonly CancellationTokenSource? _cancel;
        private readonly int _cancelAt;

        public CountingRunner(List<(string Sweep, int Point, int Repeat)> calls, CancellationTokenSource? cancel = null,
            int cancelAt = 0)
        {
            Calls = calls;
            _cancel = cancel;
            _cancelAt = cancelAt;
        }

        public List<(string Sweep, int Point, int Repeat)> Calls { get; }
        public int Session { get; private set; }

        public Task<SweepRunRecord> RunAsync(SweepPoint point, int repeat, string runDirectory,
            CancellationToken cancellationToken)
        {
            // runs/p03-r1 or calibration/p00-0 under the sweep's folder.
            var sweep = Path.GetFileName(Path.GetDirectoryName(Path.GetDirectoryName(runDirectory)))!;
            Calls.Add((sweep, point.Index, repeat));
            if (++Session == _cancelAt)
            {
                _cancel!.Cancel();
                cancellationToken.ThrowIfCancellationRequested();
            }
            var iterations = double.Parse(point.Values["iterations"], CultureInfo.InvariantCulture);
            var depth = double.Parse(point.Values["depth"], CultureInfo.InvariantCulture);
            // 1 µs per acquisition: the calibration needs 500,000 iterations at depth 1.
            return Task.FromResult(new SweepRunRecord
            {
                ElapsedNs = (long)(iterations * depth * 1000),
                UserNs = 1000,
                SystemNs = 1000,
                Metrics = new Dictionary<string, double> { ["iterations"] = iterations * 4 },
            });
        }
    }

    private static IAnsiConsole Quiet(StringWriter writer) => AnsiConsole.Create(new AnsiConsoleSettings
    {
        Out = new AnsiConsoleOutput(writer),
        Interactive = InteractionSupport.No,
        Ansi = AnsiSupport.No,
    });

    private static ClaimsRun Run(string dir, CountingRunner runner, StringWriter log, bool traced = false) =>
        new(Quiet(log), dir, quick: false, TimeSpan.Zero, traced)
        {
            RunnerFactory = _ => runner,
            Sweeps = [PredefinedSweeps.Find("timemutex", "tm1")!, PredefinedSweeps.Find("timemutex", "tm2")!],
            OrderSeed = 5,
        };

    [Fact]
    public async Task Interrupted_twice_then_continued_measures_every_point_once()
    {
        using var tmp = new TempDirectory("claims-run");
        var calls = new List<(string Sweep, int Point, int Repeat)>();
        var log = new StringWriter();

        // Session 1: stopped at its 10th run (inside tm1).
        using (var cts = new CancellationTokenSource())
            Assert.False(await Run(tmp.Path, new CountingRunner(calls, cts, 10), log).RunAsync(cts.Token));
        Assert.Equal(9, SweepStateStore.Load(Path.Combine(tmp.Path, "tm1")).Runs.Count);
        Assert.False(Directory.Exists(Path.Combine(tmp.Path, "tm2")));

        // Session 2: finishes tm1 (15 runs), calibrates tm2 (12 series × 4 pilots: 50,000 iterations are too short,
        // 1,000,000 are enough, twice more to confirm), stopped at tm2's 20th run.
        var pilotsBefore = 0;
        using (var cts = new CancellationTokenSource())
        {
            Assert.False(await Run(tmp.Path, new CountingRunner(calls, cts, 15 + 48 + 20), log).RunAsync(cts.Token));
            pilotsBefore = calls.Count(c => c.Repeat < 0);
        }
        var tm2 = SweepStateStore.Load(Path.Combine(tmp.Path, "tm2"));
        Assert.NotNull(tm2.Calibration);
        Assert.Equal(48, pilotsBefore);
        Assert.Equal(19, tm2.Runs.Count);

        // Session 3: no interruption.
        Assert.True(await Run(tmp.Path, new CountingRunner(calls), log).RunAsync(CancellationToken.None));
        Assert.Equal(pilotsBefore, calls.Count(c => c.Repeat < 0));

        foreach (var (sweep, planned) in new[] { ("tm1", 24), ("tm2", 108) })
        {
            var state = SweepStateStore.Load(Path.Combine(tmp.Path, sweep));
            Assert.True(state.Complete);
            Assert.Equal(planned, state.Runs.Count);
            Assert.Equal(planned, state.Runs.Select(r => (r.Point, r.Repeat)).Distinct().Count());
            // Each run started once, except the one in flight at an interruption (not recorded, redone once).
            var started = calls.Where(c => c.Sweep == sweep && c.Repeat >= 0)
                .GroupBy(c => (c.Point, c.Repeat)).ToList();
            Assert.Equal(planned, started.Count);
            Assert.Single(started, g => g.Count() == 2);
            Assert.All(started, g => Assert.InRange(g.Count(), 1, 2));
            Assert.True(File.Exists(Path.Combine(tmp.Path, sweep, "sweep.json")));
        }
        // Every tm2 point ran ≥ 0.5 s (1 µs per acquisition × calibrated iterations × depth).
        Assert.All(SweepStateStore.Load(Path.Combine(tmp.Path, "tm2")).Runs,
            r => Assert.True(r.ElapsedNs >= 500_000_000));

        // The run log has one window per sweep session, and the report reads the results back.
        var runLog = ClaimsRunLog.Load(tmp.Path);
        Assert.Equal(["tm1", "tm1", "tm2", "tm2"], runLog.Windows.Select(w => w.Sweep));
        Assert.Equal([true, false, true, false], runLog.Windows.Select(w => w.Interrupted));
        Assert.Equal(132, runLog.Windows.Sum(w => w.Runs));
        var report = ClaimsReportBuilder.Build(tmp.Path, false, MachineInfo.Current());
        var tm2Result = report.Claims.Single(c => c.Claim.Id == "TM2").Sweep;
        Assert.True(tm2Result.Complete);
        Assert.Equal(108, tm2Result.RunsOk);
        Assert.Equal(12, tm2Result.Calibration!.Count);

        // A fourth run has nothing left to do.
        var before = calls.Count;
        Assert.True(await Run(tmp.Path, new CountingRunner(calls), log).RunAsync(CancellationToken.None));
        Assert.Equal(before, calls.Count);
        Assert.Contains("estimated", log.ToString());
    }

    [Fact]
    public async Task Results_of_other_settings_in_the_folder_are_refused_not_overwritten()
    {
        using var tmp = new TempDirectory("claims-other");
        var calls = new List<(string, int, int)>();
        var log = new StringWriter();
        using (var cts = new CancellationTokenSource())
            await Run(tmp.Path, new CountingRunner(calls, cts, 3), log).RunAsync(cts.Token);
        var path = Path.Combine(tmp.Path, "tm1", SweepStateStore.FileName);
        var state = SweepStateStore.Load(Path.GetDirectoryName(path)!);
        state.Points[0].Values["iterations"] = "7";
        SweepStateStore.Save(Path.GetDirectoryName(path)!, state);
        var before = File.ReadAllText(path);

        var ex = await Assert.ThrowsAsync<SweepException>(
            () => Run(tmp.Path, new CountingRunner(calls), log).RunAsync(CancellationToken.None));
        Assert.Contains("holds other measurements (point p00 has iterations=7, now 200000)", ex.Message);
        Assert.Equal(before, File.ReadAllText(path));

        Directory.CreateDirectory(Path.Combine(tmp.Path, "tm2"));
        File.WriteAllText(Path.Combine(tmp.Path, "tm2", "notes.txt"), "mine");
        File.Delete(path);
        Directory.Delete(Path.Combine(tmp.Path, "tm1"), recursive: true);
        ex = await Assert.ThrowsAsync<SweepException>(
            () => Run(tmp.Path, new CountingRunner(calls), log).RunAsync(CancellationToken.None));
        Assert.Contains("exists without state.json", ex.Message);
        Assert.Equal("mine", File.ReadAllText(Path.Combine(tmp.Path, "tm2", "notes.txt")));
    }

    [Fact]
    public async Task Traced_results_have_their_own_folder_and_are_never_mixed_with_untraced_ones()
    {
        using var tmp = new TempDirectory("claims-traced");
        Assert.Equal(Path.Combine(tmp.Path, "full-traced"), ClaimsRunPlan.ModeDirectory(tmp.Path, false, true));
        Assert.Equal(Path.Combine(tmp.Path, "quick-traced"), ClaimsRunPlan.ModeDirectory(tmp.Path, true, true));
        Assert.Equal(Path.Combine(tmp.Path, "full"), ClaimsRunPlan.ModeDirectory(tmp.Path, false));
        // The estimate counts the capture: more per run than untraced.
        var tm1 = PredefinedSweeps.Find("timemutex", "tm1")!;
        Assert.True(ClaimsRunPlan.NominalSeconds(tm1, false, traced: true)
            > ClaimsRunPlan.NominalSeconds(tm1, false) + 1);

        var dir = ClaimsRunPlan.ModeDirectory(tmp.Path, false, true);
        var calls = new List<(string, int, int)>();
        var log = new StringWriter();
        using (var cts = new CancellationTokenSource())
            Assert.False(await Run(dir, new CountingRunner(calls, cts, 4), log, traced: true).RunAsync(cts.Token));
        Assert.Contains("claims --run --trace:", log.ToString());
        Assert.Contains("traced)", log.ToString());
        var state = SweepStateStore.Load(Path.Combine(dir, "tm1"));
        Assert.True(state.Traced);
        Assert.Equal(3, state.Runs.Count);

        // The same folder run untraced is refused, untouched.
        var before = File.ReadAllText(Path.Combine(dir, "tm1", SweepStateStore.FileName));
        var ex = await Assert.ThrowsAsync<SweepException>(
            () => Run(dir, new CountingRunner(calls), log).RunAsync(CancellationToken.None));
        Assert.Contains("holds other measurements (traced runs)", ex.Message);
        Assert.Equal(before, File.ReadAllText(Path.Combine(dir, "tm1", SweepStateStore.FileName)));
    }

    [Fact]
    public void Eta_uses_measured_seconds_per_run_once_a_sweep_has_some()
    {
        var eta = new ClaimsEta();
        eta.Add("a", 10, 1.0);
        eta.Add("b", 10, 2.0, extraSeconds: 30);
        Assert.Equal(60, eta.Remaining.TotalSeconds, 6);
        eta.Started("a");
        foreach (var _ in Enumerable.Range(0, 4)) eta.Finished("a", 2.0);
        // a: 6 left × 2 s measured; b: nominal scaled by a's measured/nominal (2×): 10 × 4 + 30 × 2.
        Assert.Equal(2.0, eta.Correction, 6);
        Assert.Equal(6 * 2 + 10 * 4 + 60, eta.Remaining.TotalSeconds, 6);
        Assert.Equal("2 min", ClaimsEta.Format(eta.Remaining));
        Assert.Equal("45 s", ClaimsEta.Format(TimeSpan.FromSeconds(44.2)));
        Assert.Equal("3 min", ClaimsEta.Format(TimeSpan.FromSeconds(150)));
    }
}
