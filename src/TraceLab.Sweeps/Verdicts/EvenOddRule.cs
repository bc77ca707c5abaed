namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// "2n threads can finish faster than 2n−1": over the pairs (2n−1, 2n) of x values in every series, reproduced
/// when at least one pair has every repeat at 2n below every repeat at 2n−1 (ranges do not overlap); otherwise
/// not reproduced. ("Can" claims have no inverted form.)
/// </summary>
public sealed class EvenOddRule(string claim, string aspect, string metric) : VerdictRule(claim, aspect, metric)
{
    public override string Criterion =>
        $"{Metric}: some pair of thread counts (2n−1, 2n) where every repeat at 2n is below every repeat at 2n−1 "
            + $"(min–max ranges do not overlap) → reproduced; no such pair → not reproduced";

    private static IEnumerable<(SweepPoint Odd, SweepPoint Even)> Pairs(SweepData data) =>
        from even in data.Points
        where IsNum(even.X) && Num(even.X) >= 2 && Num(even.X) % 2 == 0
        let odd = data.Find(even.Series, (Num(even.X) - 1).ToString(System.Globalization.CultureInfo.InvariantCulture))
        where odd is not null
        select (odd, even);

    protected override IEnumerable<SweepPoint> Involved(SweepData data) =>
        Pairs(data).SelectMany(p => new[] { p.Odd, p.Even });

    protected override (VerdictOutcome, IEnumerable<string>) Decide(SweepData data)
    {
        var faster = new List<string>();
        var n = 0;
        foreach (var (odd, even) in Pairs(data))
        {
            if (data.Stat(odd, Metric) is not { } o || data.Stat(even, Metric) is not { } e) continue;
            n++;
            if (e.EntirelyBelow(o)) faster.Add($"{Describe(even)} {Range(e)} < {Describe(odd)} {Range(o)}");
        }
        if (n == 0) return (VerdictOutcome.NotTested, ["no (2n−1, 2n) pair of points"]);
        var evidence = new List<string> { $"{faster.Count} of {n} pairs: the even count is faster without overlap" };
        evidence.AddRange(faster);
        return (faster.Count > 0 ? VerdictOutcome.Reproduced : VerdictOutcome.NotReproduced, evidence);
    }
}
