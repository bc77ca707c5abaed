namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// "Roughly double": the ratio median(A) / median(B) over paired points must lie in [Low, High] at every pair →
/// reproduced; A entirely below B (ranges do not overlap) at every pair → inverted; otherwise not reproduced.
/// </summary>
public sealed class RatioRule(string claim, string aspect, string metric, PointPairs pairs, double low, double high)
    : VerdictRule(claim, aspect, metric)
{
    public PointPairs Pairs { get; } = pairs;
    public double Low { get; } = low;
    public double High { get; } = high;

    public override string Criterion =>
        $"{Metric}: median({Pairs.Param}={Pairs.A}) / median({Pairs.Param}={Pairs.B}) within [{Low:0.##}, {High:0.##}] "
            + $"at every compared point → reproduced; {Pairs.A} entirely below {Pairs.B} at every point → inverted; "
            + $"otherwise not reproduced";

    protected override IEnumerable<SweepPoint> Involved(SweepData data) =>
        Pairs.Find(data, v => Resolve(Pairs.Param, v, data)).SelectMany(p => new[] { p.A, p.B });

    protected override (VerdictOutcome, IEnumerable<string>) Decide(SweepData data)
    {
        var evidence = new List<string>();
        int within = 0, below = 0, n = 0;
        foreach (var (pa, pb) in Pairs.Find(data, v => Resolve(Pairs.Param, v, data)))
        {
            if (data.Stat(pa, Metric) is not { } a || data.Stat(pb, Metric) is not { } b || b.Median <= 0) continue;
            n++;
            var r = a.Median / b.Median;
            if (r >= Low && r <= High) within++;
            if (a.Max < b.Min) below++;
            evidence.Add($"{Describe(pa)} / {Describe(pb)}: {SweepMetrics.Format(a.Median)} / "
                + $"{SweepMetrics.Format(b.Median)} = {r:0.###}");
        }
        if (n == 0) return (VerdictOutcome.NotTested, ["no pair of points has the metric"]);
        evidence.Insert(0, $"{within} of {n} ratios within [{Low:0.##}, {High:0.##}]");
        return (within == n ? VerdictOutcome.Reproduced : below == n ? VerdictOutcome.Inverted
            : VerdictOutcome.NotReproduced, evidence);
    }
}
