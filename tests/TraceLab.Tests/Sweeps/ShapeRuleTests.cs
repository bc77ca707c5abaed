using System.Globalization;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Tests.Sweeps;

/// <summary>
/// The shape rules (TM3: where degradation happens; TP2: growth exponents) on synthetic sweeps whose outcome is known
/// by construction: reproduced, not reproduced, inverted, insufficient repeats.
/// </summary>
public sealed class ShapeRuleTests
{
    private static readonly PointPairs NestedVsCs = new("which", "cs-nested", "cs");

    private static string S(double v) => v.ToString(CultureInfo.InvariantCulture);

    /// <summary>
    /// y at x = 1..5: slope 1 per step before the knee index, 4 from it on (no knee: kneeIndex ≥ 5), times scale.
    /// </summary>
    private static double[] Kneed(int kneeIndex, double scale)
    {
        var y = new double[5];
        y[0] = 10;
        for (var i = 1; i < 5; i++) y[i] = y[i - 1] + (i >= kneeIndex ? 4 : 1);
        return y.Select(v => v * scale).ToArray();
    }

    /// <summary>
    /// Lines along "depth" (x = 1..5) for cs and cs-nested at each delay; <paramref name="knees"/> gives, per delay,
    /// the knee index of cs and of cs-nested for each repeat (nested costs double: the knee must not care).
    /// </summary>
    private static SyntheticSweep Tm3(params (string Delay, int[] Cs, int[] Nested)[] knees)
    {
        var s = new SyntheticSweep(xParam: "depth");
        foreach (var (delay, cs, nested) in knees)
        {
            s.Series($"cs, delay={delay}", ("which", "cs"), ("delay", delay));
            s.Series($"cs-nested, delay={delay}", ("which", "cs-nested"), ("delay", delay));
            for (var x = 0; x < 5; x++)
            {
                // Repeats differ in scale by ±1 %, as repeated runs do; the knee is scale-free.
                s.Add($"cs, delay={delay}", S(x + 1), cs.Select((k, r) => Kneed(k, 1 + 0.01 * r)[x]).ToArray());
                s.Add($"cs-nested, delay={delay}", S(x + 1),
                    nested.Select((k, r) => Kneed(k, 2 - 0.01 * r)[x]).ToArray());
            }
        }
        return s;
    }

    private static DegradationPointRule Tm3Rule(int steps = 0) =>
        new("TM3", "same point", "elapsed", NestedVsCs, "depth", steps: steps);

    [Fact]
    public void Position_is_the_first_segment_steeper_than_knee_times_the_first()
    {
        double[] x = [1, 5, 10];
        // Slopes 0.2 then 0.84 (> 1.5 × 0.2): degrades at index 2 (x = 10).
        Assert.Equal(2, DegradationPointRule.Position(x, [1, 1.8, 6], 1.5));
        // Slopes 0.2 then 0.28 (< 0.3): no knee → one past the end.
        Assert.Equal(3, DegradationPointRule.Position(x, [1, 1.8, 3.2], 1.5));
        // A falling start counts as slope 0: any rise afterwards is the knee.
        Assert.Equal(2, DegradationPointRule.Position(x, [2, 1, 1.5], 1.5));
    }

    [Fact]
    public void Degradation_at_the_same_point_in_every_pair_is_reproduced()
    {
        var v = Tm3(("0", [3, 3, 3], [3, 3, 3]), ("5", [5, 5, 5], [5, 5, 5])).Judge(Tm3Rule());
        Assert.Equal(VerdictOutcome.Reproduced, v.Outcome);
        Assert.Contains("2 of 2 line pairs degrade at the same point", v.Evidence[0]);
        Assert.Contains("delay=0: cs-nested degrades at depth 4 (per repeat: 4, 4, 4), cs at depth 4", v.Evidence[1]);
        Assert.Contains("degrades at depth none", v.Evidence[2]);
    }

    [Fact]
    public void Degradation_moved_in_every_pair_is_inverted()
    {
        var v = Tm3(("0", [2, 2, 2], [4, 4, 4]), ("5", [3, 3, 3], [2, 2, 2])).Judge(Tm3Rule());
        Assert.Equal(VerdictOutcome.Inverted, v.Outcome);
        // One step apart: with a one-step tolerance the second pair counts as the same point, so no longer inverted.
        Assert.Equal(VerdictOutcome.NotReproduced,
            Tm3(("0", [2, 2, 2], [4, 4, 4]), ("5", [3, 3, 3], [2, 2, 2])).Judge(Tm3Rule(steps: 1)).Outcome);
        // Two steps apart is beyond a one-step tolerance.
        Assert.Equal(VerdictOutcome.Inverted, Tm3(("0", [2, 2, 2], [4, 4, 4])).Judge(Tm3Rule(steps: 1)).Outcome);
    }

    [Fact]
    public void Repeats_that_disagree_on_the_point_are_not_reproduced()
    {
        // cs degrades at index 2 in two repeats and 3 in one: the ranges [2, 3] and [2, 2] neither coincide nor
        // separate.
        var v = Tm3(("0", [2, 3, 2], [2, 2, 2])).Judge(Tm3Rule());
        Assert.Equal(VerdictOutcome.NotReproduced, v.Outcome);
        Assert.Contains("cs at depth 3–4 (per repeat: 3, 4, 3)", v.Evidence[1]);
        // One pair the same, one moved: mixed.
        Assert.Equal(VerdictOutcome.NotReproduced,
            Tm3(("0", [3, 3, 3], [3, 3, 3]), ("5", [2, 2, 2], [4, 4, 4])).Judge(Tm3Rule()).Outcome);
    }

    [Fact]
    public void Degradation_point_needs_three_complete_repeat_curves()
    {
        Assert.Equal(VerdictOutcome.InsufficientRepeats, Tm3(("0", [3, 3], [3, 3])).Judge(Tm3Rule()).Outcome);
        // Four repeats, every point with three successes, but the failures fall on different repeats: two whole curves.
        var s = Tm3(("0", [3, 3, 3, 3], [3, 3, 3, 3]));
        s.Fail("cs, delay=0", "1", 0);
        s.Fail("cs, delay=0", "2", 1);
        var v = s.Judge(Tm3Rule());
        Assert.Equal(VerdictOutcome.InsufficientRepeats, v.Outcome);
        Assert.Contains("2 complete repeat curve(s)", v.Evidence[0]);
    }

    private static readonly PointPairs SerialVsConcurrent = new("mode", "serial", "concurrent");

    private static GrowthExponentRule Tp2Rule() =>
        new("TP2", "growth", "elapsed", SerialVsConcurrent, "computations", GrowthModel.SumOneToN, GrowthModel.Longest);

    /// <summary>
    /// thrdperf io at bias 10 ms: serial = the sum, concurrent = the longest, each with a fixed overhead and per-repeat
    /// scale.
    /// </summary>
    private static SyntheticSweep Tp2(Func<double, double> serial, Func<double, double> concurrent, int repeats = 3)
    {
        var s = new SyntheticSweep(xParam: "computations", seriesParam: "mode");
        for (var n = 2; n <= 17; n++)
        {
            var x = n;
            s.Add("serial", S(n), Enumerable.Range(0, repeats).Select(r => serial(x) * (1 + 0.01 * r)).ToArray());
            s.Add("concurrent", S(n),
                Enumerable.Range(0, repeats).Select(r => concurrent(x) * (1 + 0.02 * r)).ToArray());
        }
        return s;
    }

    private static double Sum(double n) => 0.010 * n * (n + 1) / 2 + 0.0004;
    private static double Longest(double n) => 0.010 * n + 0.0003;

    [Fact]
    public void Exponent_matches_hand_computed_log_log_slopes()
    {
        Assert.Equal(2, GrowthExponentRule.Exponent([1, 2, 4], [1, 4, 16]), 12);
        // Two points of N(N+1)/2: N = 1 → 1, N = 3 → 6; slope ln 6 / ln 3.
        Assert.Equal(Math.Log(6) / Math.Log(3),
            GrowthExponentRule.Exponent([1, 3], [GrowthModel.SumOneToN.Value(1), GrowthModel.SumOneToN.Value(3)]), 12);
    }

    [Fact]
    public void Serial_sum_and_concurrent_longest_are_reproduced()
    {
        var v = Tp2(Sum, Longest).Judge(Tp2Rule());
        Assert.Equal(VerdictOutcome.Reproduced, v.Outcome);
        Assert.Contains("1 of 1 line pairs have the expected growth exponents", v.Evidence[0]);
        // N = 2..17: the fit through N(N+1)/2 has exponent 1.85 (not 2: the +1 matters at small N).
        Assert.Contains("(expected 1.85)", v.Evidence[1]);
        Assert.Contains("(expected 1)", v.Evidence[1]);
    }

    [Fact]
    public void Serial_growing_linearly_too_is_not_reproduced_and_the_reverse_is_inverted()
    {
        var linear = Tp2(n => 2 * Longest(n), Longest).Judge(Tp2Rule());
        Assert.Equal(VerdictOutcome.NotReproduced, linear.Outcome);
        Assert.Contains("outside ±0.25", linear.Evidence[1]);
        Assert.Equal(VerdictOutcome.Inverted, Tp2(Longest, Sum).Judge(Tp2Rule()).Outcome);
    }

    [Fact]
    public void Growth_exponent_needs_three_repeats()
    {
        Assert.Equal(VerdictOutcome.InsufficientRepeats, Tp2(Sum, Longest, repeats: 2).Judge(Tp2Rule()).Outcome);
    }
}
