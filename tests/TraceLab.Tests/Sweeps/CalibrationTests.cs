using System.Globalization;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Calibration;
using TraceLab.Sweeps.Claims;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.Tests.Sweeps;

/// <summary>tm2's per-series calibration: every point long enough to time, rules that still pair points.</summary>
public sealed class CalibrationTests
{
    /// <summary>
    /// A fake timemutex whose cost per iteration depends on the lock, the delay and the depth, plus a fixed start-up:
    /// cs 20 ns + 100 ns per delay unit per acquisition, cs-nested twice that, mutex 8 µs + 100 ns per delay unit.
    /// </summary>
    private sealed class CostModelRunner : IPointRunner
    {
        public List<(SweepPoint Point, int Repeat)> Calls { get; } = [];

        public static double Seconds(IReadOnlyDictionary<string, string> v, double startup = 0.001)
        {
            double N(string k) => double.Parse(v[k], CultureInfo.InvariantCulture);
            var cs = 20e-9 + N("delay") * 100e-9;
            var perAcquisition = v["which"] switch { "1" => cs, "2" => 2 * cs, _ => 8e-6 + N("delay") * 100e-9 };
            return startup + N("iterations") * N("depth") * perAcquisition;
        }

        public Task<SweepRunRecord> RunAsync(SweepPoint point, int repeat, string runDirectory,
            CancellationToken cancellationToken)
        {
            Calls.Add((point, repeat));
            var iterations = double.Parse(point.Values["iterations"], CultureInfo.InvariantCulture);
            return Task.FromResult(new SweepRunRecord
            {
                ElapsedNs = (long)(Seconds(point.Values) * 1e9),
                Metrics = new Dictionary<string, double> { ["iterations"] = iterations * 4 },
            });
        }
    }

    private static SweepState Tm2State() => HandMadeResults.Planned("tm2");

    [Fact]
    public async Task Every_tm2_point_runs_at_least_half_a_second_after_calibration()
    {
        using var tmp = new TempDirectory("calibrate");
        var state = Tm2State();
        var d = PredefinedSweeps.Find("timemutex", "tm2")!;
        // At the sweep's own 50,000 iterations the fast series last 2–30 ms (too short for the verdicts to decide).
        Assert.Contains(state.Points, p => CostModelRunner.Seconds(p.Values) < 0.01);
        Assert.True(SweepCalibrator.Needed(state, d.Calibration));

        var runner = new CostModelRunner();
        await new SweepCalibrator(runner, tmp.Path).CalibrateAsync(state, d.Calibration!, CancellationToken.None);

        Assert.All(state.Points, p => Assert.True(CostModelRunner.Seconds(p.Values) >= PredefinedSweeps.MinPointSeconds,
            $"{p.Series} depth {p.X}: {CostModelRunner.Seconds(p.Values):0.###} s"));
        // One count per series, shared by its depths (the depth line stays comparable within the series).
        Assert.All(state.Points.GroupBy(p => p.Series),
            g => Assert.Single(g.Select(p => p.Values["iterations"]).Distinct()));
        Assert.Equal(12, state.Calibration!.Count);
        // Pilots ran at the series' first point only (depth 1) and never as a sweep repeat.
        Assert.All(runner.Calls, c => Assert.Equal(("1", -1), (c.Point.X, c.Repeat)));
        // Each series: grown until long enough, then that count twice more (the fastest of the three sets the scale).
        Assert.All(state.Calibration!, r => Assert.Equal(3, r.Pilots.Count(p => p.Value == r.Pilots[^1].Value)));
        // Not more than needed: the pilot point aims at MinSeconds × margin (2) and rounding adds < 10 %.
        Assert.All(state.Points.Where(p => p.X == "1"),
            p => Assert.InRange(CostModelRunner.Seconds(p.Values), 0.5, 2 * 1.1));
        // Saved: a resumed sweep does not calibrate again.
        var saved = SweepStateStore.Load(tmp.Path);
        Assert.False(SweepCalibrator.Needed(saved, d.Calibration));
        Assert.Equal(state.Points.Select(p => p.Values["iterations"]),
            saved.Points.Select(p => p.Values["iterations"]));
    }

    [Fact]
    public void Calibration_is_skipped_when_the_user_fixed_the_count_or_runs_exist()
    {
        var c = new IterationCalibration("iterations", 0.5);
        var state = Tm2State();
        state.Overrides["iterations"] = "1000";
        Assert.False(SweepCalibrator.Needed(state, c));
        state = Tm2State();
        state.Runs.Add(new SweepRunRecord());
        Assert.False(SweepCalibrator.Needed(state, c));
        Assert.False(SweepCalibrator.Needed(Tm2State(), null));
    }

    [Fact]
    public void Scaling_rounds_up_to_two_digits_and_grows_short_pilots_first()
    {
        var c = new IterationCalibration("iterations", 0.5);
        // Too short to scale from: grow (×100 at most) and pilot again.
        Assert.Null(c.Choose(50_000, 0.01));
        Assert.Equal(5_000_000, c.Grow(50_000, 0.01));
        Assert.Equal(130_000, c.Grow(50_000, 0.4));
        // Long enough: aim at 0.5 s × 2, rounded up to two significant digits.
        Assert.Equal(1_700_000, c.Choose(1_000_000, 0.6));
        Assert.Equal(12_000, c.Choose(50_000, 4.2));
        Assert.Equal(130, IterationCalibration.Round(121));
        Assert.Equal(IterationCalibration.MaxValue, IterationCalibration.Round(5e12));
    }

    [Fact]
    public void Tm2_rules_compare_per_iteration_and_pair_points_whose_calibrated_counts_differ()
    {
        var d = PredefinedSweeps.Find("timemutex", "tm2")!;
        Assert.NotNull(d.Calibration);
        Assert.All(d.Verdicts.OfType<TraceLab.Sweeps.Verdicts.VerdictRule>(),
            r => Assert.Equal(SweepMetrics.ElapsedPerIteration, r.Metric));

        // Hand-made tm2 results with a different count per series and elapsed ∝ count × cost: per iteration, nested
        // cs costs exactly twice cs, so the ratio aspect must be reproduced — it can only be if the pairs are found.
        using var tmp = new TempDirectory("calibrated-pairs");
        var state = HandMadeResults.Write(tmp.Path, "tm2", (p, r) => null);
        foreach (var (p, i) in state.Points.Select((p, i) => (p, i)))
            p.Values["iterations"] = (10_000 * (i % 5 + 1)).ToString(CultureInfo.InvariantCulture);
        state.Calibration = state.Points.Select(p => p.Series).Distinct()
            .Select(s => new SeriesCalibration(s, "iterations", "p00", 0.5, 50_000, [], 1)).ToList();
        for (var seq = 0; seq < state.Order.Count; seq++)
        {
            var o = state.Order[seq];
            var v = state.Points[o.Point].Values;
            var iterations = double.Parse(v["iterations"], CultureInfo.InvariantCulture);
            state.Runs.Add(new SweepRunRecord
            {
                Point = o.Point,
                Repeat = o.Repeat,
                Sequence = seq,
                ElapsedNs = (long)(CostModelRunner.Seconds(v, startup: 0) * 1e9 * (1 + 0.001 * o.Repeat)),
                Metrics = new Dictionary<string, double> { ["iterations"] = iterations * 4 },
            });
        }
        SweepStateStore.Save(Path.Combine(tmp.Path, "tm2"), state);

        var report = ClaimsReportBuilder.Build(tmp.Path, false, new MachineInfo(2, null, "Linux", null, ".NET"));
        var tm3 = report.Claims.Single(c => c.Claim.Id == "TM3");
        var ratio = tm3.Aspects.Single(
            a => a.Aspect.StartsWith("nested cs costs about double", StringComparison.Ordinal));
        Assert.Equal("reproduced", ratio.OutcomeText);
        var tm2 = report.Claims.Single(c => c.Claim.Id == "TM2");
        Assert.All(tm2.Aspects, a => Assert.Equal("reproduced", a.OutcomeText));
    }

    [Fact]
    public void Elapsed_per_iteration_divides_by_every_threads_iterations()
    {
        var run = new SweepRunRecord
        {
            ElapsedNs = 2_000_000_000,
            Metrics = new Dictionary<string, double> { ["iterations"] = 4_000_000 },
        };
        Assert.Equal(500, SweepMetrics.Value(run, SweepMetrics.ElapsedPerIteration));
        Assert.Null(SweepMetrics.Value(new SweepRunRecord { ElapsedNs = 1 }, SweepMetrics.ElapsedPerIteration));
    }
}
