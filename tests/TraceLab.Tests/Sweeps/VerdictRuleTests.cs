using TraceLab.Sweeps;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Tests.Sweeps;

/// <summary>Each rule kind on synthetic sweeps whose outcome is known by construction.</summary>
public sealed class VerdictRuleTests
{
    private static readonly PointPairs CsVsMutex = new("which", "cs", "mutex");

    private static DominanceRule Tm1() => new("TM1", "cs faster", "elapsed", CsVsMutex);

    private static SyntheticSweep TwoSeries(double[][] cs, double[][] mutex)
    {
        var s = new SyntheticSweep();
        for (var i = 0; i < cs.Length; i++)
        {
            s.Add("cs", (i + 1).ToString(), cs[i]);
            s.Add("mutex", (i + 1).ToString(), mutex[i]);
        }
        return s;
    }

    [Fact]
    public void Dominance_with_separated_ranges_at_every_point_is_reproduced()
    {
        var s = TwoSeries([[1, 1.1, 1.2], [2, 2.1, 2.2]], [[3, 3.1, 3.2], [4, 4.5, 5]]);
        var v = s.Judge(Tm1());
        Assert.Equal(VerdictOutcome.Reproduced, v.Outcome);
        Assert.Contains("2 of 2 compared points hold", v.Evidence[0]);
        Assert.Contains("1.1 [1–1.2] vs", v.Evidence[1]);
    }

    [Fact]
    public void Dominance_the_other_way_round_is_inverted()
    {
        var s = TwoSeries([[3, 3.1, 3.2], [4, 4.5, 5]], [[1, 1.1, 1.2], [2, 2.1, 2.2]]);
        Assert.Equal(VerdictOutcome.Inverted, s.Judge(Tm1()).Outcome);
    }

    [Fact]
    public void Dominance_with_overlapping_ranges_is_not_reproduced_even_if_medians_differ()
    {
        // Medians 1.1 < 1.3, but the cs range reaches 2.0 above mutex's minimum 1.0.
        var s = TwoSeries([[1, 1.1, 2.0]], [[1.0, 1.3, 1.4]]);
        Assert.Equal(VerdictOutcome.NotReproduced, s.Judge(Tm1()).Outcome);
        // The medians-only criterion (marginal claims) decides on the medians.
        var medians = new DominanceRule("TM10", "marginal", "elapsed", CsVsMutex) { MediansOnly = true };
        Assert.Equal(VerdictOutcome.Reproduced, s.Judge(medians).Outcome);
    }

    [Fact]
    public void Fewer_than_three_repeats_give_no_verdict()
    {
        var s = TwoSeries([[1, 1.1]], [[3, 3.1]]);
        var v = s.Judge(Tm1());
        Assert.Equal(VerdictOutcome.InsufficientRepeats, v.Outcome);
        Assert.Contains("at least 3", v.Evidence[0]);
    }

    [Fact]
    public void Failed_runs_do_not_count_as_repeats()
    {
        var s = TwoSeries([[1, 1.1, 1.2]], [[3, 3.1]]);
        s.Fail("mutex", "1", 2);
        Assert.Equal(VerdictOutcome.InsufficientRepeats, s.Judge(Tm1()).Outcome);
    }

    [Fact]
    public void Dominance_factor_requires_many_times_more()
    {
        var rule = new DominanceRule("SR2", "3×", "elapsed", CsVsMutex) { Factor = 3 };
        Assert.Equal(VerdictOutcome.NotReproduced, TwoSeries([[1, 1, 1]], [[2, 2, 2]]).Judge(rule).Outcome);
        Assert.Equal(VerdictOutcome.Reproduced, TwoSeries([[1, 1, 1]], [[3.5, 3.5, 3.5]]).Judge(rule).Outcome);
    }

    [Fact]
    public void NotLower_accepts_equal_within_tolerance_and_inverts_when_decisively_lower()
    {
        var rule = new DominanceRule("TP1", "not faster", "elapsed", CsVsMutex, Expectation.NotLower);
        Assert.Equal(VerdictOutcome.Reproduced, TwoSeries([[0.99, 0.99, 1]], [[1, 1, 1]]).Judge(rule).Outcome);
        Assert.Equal(VerdictOutcome.Inverted, TwoSeries([[0.5, 0.5, 0.6]], [[1, 1, 1]]).Judge(rule).Outcome);
        Assert.Equal(VerdictOutcome.NotReproduced, TwoSeries([[0.5, 0.9, 1.2]], [[1, 1, 1]]).Judge(rule).Outcome);
    }

    [Fact]
    public void Traced_metric_without_trace_is_not_tested_and_cited_metrics_appear_when_traced()
    {
        var s = TwoSeries([[1, 1, 1]], [[2, 2, 2]]);
        var traced = new DominanceRule("TH2", "invol", "traced.involPerThread", CsVsMutex);
        var v = s.Judge(traced);
        Assert.Equal(VerdictOutcome.NotTested, v.Outcome);
        Assert.Contains("--trace", v.Evidence[0]);

        s.AddMetric("cs", "1", "traced.involPerThread", 5, 6, 7)
            .AddMetric("mutex", "1", "traced.involPerThread", 50, 60, 70);
        var cited = s.Judge(new DominanceRule("TM1", "cs faster", "elapsed", CsVsMutex) { Cite = ["involPerThread"] });
        Assert.Equal(VerdictOutcome.Reproduced, cited.Outcome);
        Assert.Contains(cited.Evidence, e => e.StartsWith("trace, involuntary switches per worker thread (medians): ",
            StringComparison.Ordinal) && e.Contains("cs @ 1 6") && e.Contains("mutex @ 1 60"));
    }

    [Fact]
    public void Linear_fit_reproduced_for_lines_inverted_for_falling_lines_not_for_curves()
    {
        var rule = new LinearFitRule("TM2", "depth", "elapsed", "threads");
        var line = new SyntheticSweep().Add("cs", "1", 1, 1, 1).Add("cs", "5", 5, 5, 5).Add("cs", "10", 10, 10.1, 9.9);
        var v = line.Judge(rule);
        Assert.Equal(VerdictOutcome.Reproduced, v.Outcome);
        Assert.Contains("R² 1", v.Evidence[1]);
        var falling = new SyntheticSweep().Add("cs", "1", 10, 10, 10).Add("cs", "5", 5, 5, 5).Add("cs", "10", 1, 1, 1);
        Assert.Equal(VerdictOutcome.Inverted, falling.Judge(rule).Outcome);
        // A spike in the middle: (1,1), (5,10), (10,1) has slope 0 and R² 0.
        var spike = new SyntheticSweep().Add("cs", "1", 1, 1, 1).Add("cs", "5", 10, 10, 10).Add("cs", "10", 1, 1, 1);
        Assert.Equal(VerdictOutcome.NotReproduced, spike.Judge(rule).Outcome);
    }

    [Fact]
    public void Linear_fit_matches_a_hand_computed_r_squared()
    {
        // x = 1,2,3; y = 1,3,2: slope 0.5, R² = (sxy²)/(sxx·syy) = 1² / (2 · 2) = 0.25.
        var (slope, r2) = LinearFitRule.Fit([(1, 1), (2, 3), (3, 2)]);
        Assert.Equal(0.5, slope, 12);
        Assert.Equal(0.25, r2, 12);
    }

    [Fact]
    public void Ratio_within_range_reproduced_below_one_inverted()
    {
        var rule = new RatioRule("TM3", "double", "elapsed", new PointPairs("which", "cs-nested", "cs"), 1.4, 3);
        var s = new SyntheticSweep().Add("cs", "1", 1, 1, 1).Add("cs-nested", "1", 2, 2.1, 1.9);
        Assert.Equal(VerdictOutcome.Reproduced, s.Judge(rule).Outcome);
        var cheaper = new SyntheticSweep().Add("cs", "1", 1, 1, 1).Add("cs-nested", "1", 0.5, 0.5, 0.5);
        Assert.Equal(VerdictOutcome.Inverted, cheaper.Judge(rule).Outcome);
        var same = new SyntheticSweep().Add("cs", "1", 1, 1, 1).Add("cs-nested", "1", 1.1, 1.1, 1.1);
        Assert.Equal(VerdictOutcome.NotReproduced, same.Judge(rule).Outcome);
    }

    [Fact]
    public void Argmin_targets_this_machines_cpu_count()
    {
        var rule = new ArgminRule("TH1", "best at M", "elapsed", "{cpus}");
        var s = new SyntheticSweep("active").Add("all", "1", 4, 4, 4).Add("all", "2", 2, 2, 2).Add("all", "4", 3, 3, 3);
        Assert.Equal(VerdictOutcome.Reproduced, s.Judge(rule, cpus: 2).Outcome);
        // On a 4-CPU machine the target is active = 4, which is not the best here but not the worst either.
        Assert.Equal(VerdictOutcome.NotReproduced, s.Judge(rule, cpus: 4).Outcome);
        var worst =
            new SyntheticSweep("active").Add("all", "1", 1, 1, 1).Add("all", "2", 5, 5, 5).Add("all", "4", 3, 3, 3);
        Assert.Equal(VerdictOutcome.Inverted, worst.Judge(rule, cpus: 2).Outcome);
        Assert.Equal(VerdictOutcome.NotTested, s.Judge(rule, cpus: 8).Outcome);
    }

    [Fact]
    public void Growth_compares_per_thread_cost_between_series()
    {
        var rule = new GrowthRule("TM4", "knee", "elapsed", "cs", "mutex", ["2"], ["6"], 1.5);
        // cs: 2 threads 2 s (1 per thread), 6 threads 12 s (2 per thread): growth 2. mutex: 4 → 12 s: 2 → 2 per thread,
        // growth 1.
        var s = new SyntheticSweep().Add("cs", "2", 2, 2, 2).Add("cs", "6", 12, 12, 12).Add("mutex", "2", 4, 4, 4)
            .Add("mutex", "6", 12, 12, 12);
        var v = s.Judge(rule);
        Assert.Equal(VerdictOutcome.Reproduced, v.Outcome);
        Assert.Contains(v.Evidence, e => e.StartsWith("cs:", StringComparison.Ordinal) && e.Contains("growth 2"));
        var swapped = new SyntheticSweep().Add("mutex", "2", 2, 2, 2).Add("mutex", "6", 12, 12, 12)
            .Add("cs", "2", 4, 4, 4).Add("cs", "6", 12, 12, 12);
        Assert.Equal(VerdictOutcome.Inverted, swapped.Judge(rule).Outcome);
    }

    [Fact]
    public void Even_odd_needs_one_pair_with_the_even_count_decisively_faster()
    {
        var rule = new EvenOddRule("TM9", "even/odd", "elapsed");
        var s = new SyntheticSweep().Add("cs", "3", 3, 3.1, 3.2).Add("cs", "4", 2, 2.1, 2.2);
        Assert.Equal(VerdictOutcome.Reproduced, s.Judge(rule).Outcome);
        var overlapping = new SyntheticSweep().Add("cs", "3", 3, 3.1, 3.2).Add("cs", "4", 2, 2.1, 3.05);
        Assert.Equal(VerdictOutcome.NotReproduced, overlapping.Judge(rule).Outcome);
    }

    [Fact]
    public void Flat_allows_the_tolerance_and_no_more()
    {
        var rule = new FlatRule("TH1", "flat", "elapsed", (x, _) => x is "4" or "8", "4, 8", 0.25);
        Assert.Equal(VerdictOutcome.Reproduced,
            new SyntheticSweep("active").Add("all", "4", 1, 1, 1).Add("all", "8", 1.2, 1.2, 1.2).Judge(rule).Outcome);
        Assert.Equal(VerdictOutcome.NotReproduced,
            new SyntheticSweep("active").Add("all", "4", 1, 1, 1).Add("all", "8", 1.3, 1.3, 1.3).Judge(rule).Outcome);
    }

    [Fact]
    public void Claim_outcome_needs_every_aspect()
    {
        Verdict V(VerdictOutcome o) => new("X", "a", o, "", []);
        Assert.Equal(
            VerdictOutcome.Reproduced, Verdict.Combine([V(VerdictOutcome.Reproduced), V(VerdictOutcome.Reproduced)]));
        Assert.Equal(VerdictOutcome.NotReproduced,
            Verdict.Combine([V(VerdictOutcome.Reproduced), V(VerdictOutcome.NotReproduced)]));
        Assert.Equal(
            VerdictOutcome.Inverted, Verdict.Combine([V(VerdictOutcome.Inverted), V(VerdictOutcome.NotReproduced)]));
        Assert.Equal(VerdictOutcome.InsufficientRepeats,
            Verdict.Combine([V(VerdictOutcome.Reproduced), V(VerdictOutcome.InsufficientRepeats)]));
    }

    [Fact]
    public void Pairs_match_named_values_through_the_workloads_canonical_form()
    {
        // Points hold which=1 / which=3 (resolved); the rule names cs / mutex.
        var s = new SyntheticSweep().Add("1", "1", 1, 1, 1).Add("3", "1", 2, 2, 2);
        var data = new SweepData(s.Definition, s.Data().Points, s.Data().Runs, 3)
        {
            Canonical = (p, v) => p == "which" ? TraceLab.Workloads.TimeMutexWorkload.LockKinds[v].ToString() : v,
        };
        Assert.Equal(VerdictOutcome.Reproduced, Tm1().Judge(data).Outcome);
    }
}
