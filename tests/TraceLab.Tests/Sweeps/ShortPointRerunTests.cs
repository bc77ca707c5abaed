using System.Globalization;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Calibration;
using TraceLab.Sweeps.Claims;

namespace TraceLab.Tests.Sweeps;

/// <summary>
/// The calibration guarantee (docs/sweeps.md#calibration): after a calibrated sweep, no point's median elapsed is
/// under the minimum unless a cap was hit — with pilots that mislead the calibration, as under load, and across an
/// interruption during the re-runs.
/// </summary>
public sealed class ShortPointRerunTests
{
    private const double Min = PredefinedSweeps.MinPointSeconds;

    /// <summary>
    /// A fake timemutex: seconds = iterations × depth × cost per acquisition (cs 50 ns, cs-nested 100 ns, mutex 5 µs)
    /// × noise. Pilots (repeat −1) run 1.7–3.4× slower than the sweep's runs (the spread seen at load 40: the machine
    /// was busier while piloting), and each run varies by ±25 %. <see cref="Flat"/>: every run (not pilot) lasts
    /// 0.4 s whatever its count, a point that never gets longer. <see cref="SecondsPerIteration"/>: no noise, a fixed
    /// cost per iteration and thread. Cancels at a chosen call.
    /// </summary>
    private sealed class NoisyRunner : IPointRunner
    {
        private static readonly double[] PilotNoise = [3.4, 2.0, 2.6, 1.7];
        private static readonly double[] RunNoise = [0.75, 1.25, 0.9, 1.1, 0.8, 1.0, 1.2];

        public int Calls { get; private set; }
        public int? CancelAtCall { get; init; }
        public CancellationTokenSource? Cancel { get; init; }
        public bool Flat { get; init; }
        public double? SecondsPerIteration { get; init; }

        public static double Seconds(IReadOnlyDictionary<string, string> v)
        {
            double N(string k) => double.Parse(v[k], CultureInfo.InvariantCulture);
            var perAcquisition = v["which"] switch { "1" => 50e-9, "2" => 100e-9, _ => 5e-6 };
            return N("iterations") * N("depth") * perAcquisition;
        }

        public Task<SweepRunRecord> RunAsync(SweepPoint point, int repeat, string runDirectory,
            CancellationToken cancellationToken)
        {
            if (++Calls == CancelAtCall)
            {
                Cancel!.Cancel();
                cancellationToken.ThrowIfCancellationRequested();
            }
            File.WriteAllText(Path.Combine(runDirectory, "workload.json"), "{}");
            var noise = repeat < 0 ? PilotNoise[Calls % PilotNoise.Length]
                : RunNoise[(point.Index * 3 + repeat + Calls) % RunNoise.Length];
            var iterations = double.Parse(point.Values["iterations"], CultureInfo.InvariantCulture);
            var seconds = SecondsPerIteration is { } perIteration ? iterations * perIteration
                : Flat && repeat >= 0 ? 0.4 : Seconds(point.Values) * noise;
            return Task.FromResult(new SweepRunRecord
            {
                ElapsedNs = (long)(seconds * 1e9),
                Metrics = new Dictionary<string, double> { ["iterations"] = iterations * 4 },
            });
        }
    }

    /// <summary>
    /// tm2 as planned, saved in <paramref name="directory"/>, calibrated by <paramref name="runner"/>.
    /// </summary>
    private static async Task<SweepState> CalibratedTm2(string directory, NoisyRunner runner)
    {
        var state = HandMadeResults.Planned("tm2");
        SweepStateStore.Save(directory, state);
        var calibration = PredefinedSweeps.Find("timemutex", "tm2")!.Calibration!;
        await new SweepCalibrator(runner, directory).CalibrateAsync(state, calibration, CancellationToken.None);
        return state;
    }

    private static double Median(SweepState state, int point) =>
        Summary.Of(state.Runs.Where(r => r.Point == point && r.Ok).Select(r => r.ElapsedNs / 1e9))!.Median;

    private static void AssertEveryPointLongEnoughAndMeasuredOnce(SweepState state)
    {
        Assert.True(state.Complete);
        Assert.Equal(state.Order.Count, state.Runs.Count);
        Assert.Equal(state.Order.Count, state.Runs.Select(r => (r.Point, r.Repeat)).Distinct().Count());
        Assert.All(state.Points, p => Assert.True(Median(state, p.Index) >= Min,
            $"{p.Series} depth {p.X}: median {Median(state, p.Index):0.###} s"));
    }

    [Fact]
    public async Task Misleading_pilots_leave_short_points_which_are_measured_again_until_none_is_under_half_a_second()
    {
        using var tmp = new TempDirectory("short-rerun");
        var runner = new NoisyRunner();
        var state = await CalibratedTm2(tmp.Path, runner);
        var calibrated = state.Points.ToDictionary(p => p.Index, p => p.Values["iterations"]);
        var rerunEvents = new List<PointRerun>();

        Assert.True(await new SweepRunner(tmp.Path, state, runner) { Rerunning = rerunEvents.AddRange }
            .RunAsync(CancellationToken.None));

        AssertEveryPointLongEnoughAndMeasuredOnce(state);
        // The pilots did mislead: some depth-1 points came out short and were measured again (without the re-runs
        // this test fails here), each with all its repeats, a larger count and its old runs kept.
        Assert.NotNull(state.Reruns);
        Assert.NotEmpty(state.Reruns!);
        Assert.Equal(state.Reruns!.Select(r => r.Point), rerunEvents.Select(r => r.Point));
        Assert.All(state.Reruns!, r =>
        {
            Assert.True(r.MedianSeconds < Min);
            Assert.True(r.ToValue >= 2 * r.FromValue, $"{r.FromValue} → {r.ToValue}");
            Assert.Equal(3, r.Replaced.Count);
            Assert.All(r.Replaced, x => Assert.True(
                Directory.Exists(Path.Combine(tmp.Path, x.Directory!)), x.Directory));
            Assert.Equal(r.ToValue.ToString(CultureInfo.InvariantCulture),
                state.Points[r.Point].Values["iterations"]);
        });
        // Points that were long enough keep their calibrated count.
        var rerun = state.Reruns!.Select(r => r.Point).ToHashSet();
        Assert.All(state.Points.Where(p => !rerun.Contains(p.Index)),
            p => Assert.Equal(calibrated[p.Index], p.Values["iterations"]));
        Assert.Null(ShortPointReruns.Warning(state, state.SweepPoints()));
        // Saved as it ended: a resume has nothing to do.
        var saved = SweepStateStore.Load(tmp.Path);
        Assert.False(ShortPointReruns.Pending(saved));
        Assert.Equal(state.Reruns!.Count, saved.Reruns!.Count);
    }

    [Fact]
    public async Task Interrupted_during_the_re_runs_and_resumed_every_point_is_long_enough_and_recorded_once()
    {
        using var tmp = new TempDirectory("short-rerun-resume");
        var state = await CalibratedTm2(tmp.Path, new NoisyRunner());

        // The first pass is 108 runs; stop at the second run of the re-runs.
        using (var cts = new CancellationTokenSource())
        {
            var runner = new NoisyRunner { CancelAtCall = 108 + 2, Cancel = cts };
            Assert.False(await new SweepRunner(tmp.Path, state, runner).RunAsync(cts.Token));
        }
        var stopped = SweepStateStore.Load(tmp.Path);
        Assert.False(stopped.Complete);
        Assert.NotEmpty(stopped.Reruns!);
        // The short points' first runs left Runs (kept in Reruns); one re-run was recorded before the stop.
        Assert.Equal(108 - 3 * stopped.Reruns!.Count + 1, stopped.Runs.Count);

        Assert.True(await new SweepRunner(tmp.Path, stopped, new NoisyRunner()).RunAsync(CancellationToken.None));
        AssertEveryPointLongEnoughAndMeasuredOnce(stopped);
        Assert.Equal(stopped.Reruns!.Count, stopped.Reruns.Select(r => (r.Point, r.Round)).Distinct().Count());
    }

    [Fact]
    public async Task A_point_that_never_gets_longer_stops_at_the_cap_and_the_report_says_so()
    {
        using var tmp = new TempDirectory("short-rerun-cap");
        var runner = new NoisyRunner { Flat = true };
        var state = await CalibratedTm2(tmp.Path, runner);
        var pilots = runner.Calls;

        Assert.True(await new SweepRunner(tmp.Path, state, runner).RunAsync(CancellationToken.None));

        // Every point: the first pass and MaxRounds re-runs of its 3 repeats, then no more.
        Assert.Equal(108 * (1 + ShortPointReruns.MaxRounds), runner.Calls - pilots);
        Assert.Equal(36 * ShortPointReruns.MaxRounds, state.Reruns!.Count);
        Assert.True(state.Complete);
        var warning = ShortPointReruns.Warning(state, state.SweepPoints());
        Assert.NotNull(warning);
        Assert.Contains("36 point(s)", warning);
        Assert.Contains("stays, after 3 re-runs (the most allowed)", warning);
        Assert.Contains(warning, SweepSummaryWarnings(state));
    }

    [Fact]
    public void The_count_grows_from_the_fastest_run_and_is_capped()
    {
        // Fastest 0.2 s: aim 0.5 s × 2 → ×5; a run of ~0 s is scaled ×100 at most; at the cap nothing can grow.
        var p = new ShortPointReruns.ShortPoint(0, "iterations", 1_000_000, 0.5, 0.45, 0.2, 0);
        Assert.Equal(5_000_000, p.NextValue);
        Assert.True(p.CanRerun);
        Assert.Equal(100_000_000, (p with { FastestSeconds = 0 }).NextValue);
        Assert.False((p with { Value = IterationCalibration.MaxValue }).CanRerun);
        Assert.False((p with { Rounds = ShortPointReruns.MaxRounds }).CanRerun);
    }

    [Fact]
    public async Task Results_of_the_previous_version_are_reported_and_a_resume_measures_only_the_short_point_again()
    {
        // A finished, calibrated tm2 as the previous version wrote it (no re-runs field): one point at 498 ms.
        using var tmp = new TempDirectory("short-rerun-old");
        var d = PredefinedSweeps.Find("timemutex", "tm2")!;
        var state = HandMadeResults.Write(tmp.Path, "tm2", (p, r) =>
        {
            var seconds = p.Index == 0 ? 0.4981 + 0.0001 * r : 1.0 + 0.01 * r;
            var record = HandMadeResults.Elapsed(seconds);
            record.Metrics["iterations"] = 4_000_000;
            return record;
        });
        state.Calibration = state.Points.Select(p => p.Series).Distinct()
            .Select(s => new SeriesCalibration(s, "iterations", "p00", Min, 50_000, [], 1_000_000)).ToList();
        foreach (var p in state.Points) p.Values["iterations"] = "1000000";
        var dir = Path.Combine(tmp.Path, "tm2");
        SweepStateStore.Save(dir, state);
        var json = File.ReadAllText(Path.Combine(dir, SweepStateStore.FileName));
        Assert.DoesNotContain("reruns", json, StringComparison.OrdinalIgnoreCase);

        // Report only: read as before, the short point named.
        var report = ClaimsReportBuilder.Build(tmp.Path, false, new MachineInfo(2, null, "Linux", null, ".NET"));
        var tm2 = report.Claims.Single(c => c.Claim.Id == "TM2").Sweep;
        Assert.Equal(108, tm2.RunsOk);
        Assert.Contains("p00", tm2.CalibrationWarning);
        Assert.Contains("to be measured again", tm2.CalibrationWarning);
        Assert.Null(ClaimsRunPlan.Mismatch(SweepStateStore.Load(dir), d, HandMadeResults.Points(d)));

        // Resume: only p00's three repeats run again.
        var loaded = SweepStateStore.Load(dir);
        Assert.True(ShortPointReruns.Pending(loaded));
        var runner = new NoisyRunner { SecondsPerIteration = 0.4981e-6 };
        Assert.True(await new SweepRunner(dir, loaded, runner).RunAsync(CancellationToken.None));
        Assert.Equal(3, runner.Calls);
        Assert.True(Median(loaded, 0) >= Min);
        Assert.Equal(0, Assert.Single(loaded.Reruns!).Point);
        Assert.Equal(108, loaded.Runs.Count);
    }

    private static List<string> SweepSummaryWarnings(SweepState state)
    {
        var d = PredefinedSweeps.Find("timemutex", "tm2")!;
        var data = ClaimsReportBuilder.Data(d, state, 2);
        return TraceLab.Sweeps.Output.SweepSummary.Build(data, state, new MachineInfo(2, null, "Linux", null, "x"), [])
            .Warnings;
    }
}
