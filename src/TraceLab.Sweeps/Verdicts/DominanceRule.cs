namespace TraceLab.Sweeps.Verdicts;

public enum Expectation
{
    /// <summary>A is lower than B (by <see cref="DominanceRule.Factor"/>) at every pair.</summary>
    Lower,
    /// <summary>
    /// A is not lower than B beyond <see cref="DominanceRule.Tolerance"/> at every pair (e.g. "concurrent is not
    /// faster").
    /// </summary>
    NotLower,
}

/// <summary>
/// Compares a metric between paired points (<see cref="PointPairs"/>). With <see cref="Expectation.Lower"/>:
/// reproduced when at every pair max(A) × factor &lt; min(B) (ranges over the repeats do not overlap; with
/// <see cref="MediansOnly"/>, median(A) × factor &lt; median(B)); inverted when at every pair B is entirely below A;
/// otherwise not reproduced.
/// </summary>
public sealed class DominanceRule(
    string claim, string aspect, string metric, PointPairs pairs, Expectation expect = Expectation.Lower)
    : VerdictRule(claim, aspect, metric)
{
    public PointPairs Pairs { get; } = pairs;
    public Expectation Expect { get; } = expect;
    /// <summary>"Many times more": A × Factor must still be below B.</summary>
    public double Factor { get; init; } = 1;
    /// <summary>
    /// For <see cref="Expectation.NotLower"/>: A may be this fraction below B and still count as "not lower".
    /// </summary>
    public double Tolerance { get; init; } = 0.03;
    /// <summary>Compare medians instead of whole ranges, for claims of marginal differences.</summary>
    public bool MediansOnly { get; init; }
    /// <summary>Restrict the pairs, e.g. to the delay values a claim talks about.</summary>
    public Func<SweepPoint, bool>? Where { get; init; }

    public override string Criterion => Expect switch
    {
        Expectation.Lower when MediansOnly =>
            $"{Metric}: median at {Pairs.A}{FactorText} < median at {Pairs.B} at every compared point ({Pairs.Param} "
                + $"differs only) → reproduced; the opposite at every point → inverted; otherwise not reproduced",
        Expectation.Lower =>
            $"{Metric}: every repeat at {Pairs.Param}={Pairs.A}{FactorText} below every repeat at "
                + $"{Pairs.Param}={Pairs.B} (min–max ranges do not overlap) at every compared point → reproduced; "
                + $"{Pairs.B} entirely below {Pairs.A} at every point → inverted; otherwise not reproduced",
        _ =>
            $"{Metric}: median at {Pairs.Param}={Pairs.A} ≥ (1 − {Tolerance:P0}) × median at {Pairs.Param}={Pairs.B} "
                + $"at every compared point → reproduced; {Pairs.A} entirely below {Pairs.B} (ranges do not overlap) "
                + $"at every point → inverted; otherwise not reproduced",
    };

    private string FactorText => Factor == 1 ? "" : $" × {Factor:0.##}";

    private List<(SweepPoint A, SweepPoint B)> Find(SweepData data) =>
        Pairs.Find(data, v => Resolve(Pairs.Param, v, data)).Where(p => Where is null || Where(p.A)).ToList();

    protected override IEnumerable<SweepPoint> Involved(SweepData data) =>
        Find(data).SelectMany(p => new[] { p.A, p.B });

    protected override (VerdictOutcome, IEnumerable<string>) Decide(SweepData data)
    {
        var evidence = new List<string>();
        int holds = 0, opposite = 0, compared = 0;
        foreach (var (pa, pb) in Find(data))
        {
            if (data.Stat(pa, Metric) is not { } a || data.Stat(pb, Metric) is not { } b) continue;
            compared++;
            bool ok, inv;
            if (Expect == Expectation.Lower)
            {
                ok = MediansOnly ? a.Median * Factor < b.Median : a.Max * Factor < b.Min;
                inv = MediansOnly ? b.Median < a.Median : b.Max < a.Min;
            }
            else
            {
                ok = a.Median >= (1 - Tolerance) * b.Median;
                inv = a.Max < b.Min;
            }
            if (ok) holds++;
            if (inv) opposite++;
            var ratio = b.Median == 0 ? double.NaN : a.Median / b.Median;
            evidence.Add($"{Describe(pa)}: {Range(a)} vs {Describe(pb)}: {Range(b)} (ratio {ratio:0.###}) "
                + $"{(ok ? "holds" : inv ? "opposite" : "no decision")}");
        }
        if (compared == 0) return (VerdictOutcome.NotTested, ["no pair of points has the metric"]);
        evidence.Insert(0, $"{holds} of {compared} compared points hold, {opposite} show the opposite");
        var outcome = holds == compared ? VerdictOutcome.Reproduced
            : opposite == compared ? VerdictOutcome.Inverted
            : VerdictOutcome.NotReproduced;
        return (outcome, evidence);
    }
}
