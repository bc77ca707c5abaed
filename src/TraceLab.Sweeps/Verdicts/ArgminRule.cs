namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// "Best at X = T": in every series, the median at the target x value is the lowest, or within Tolerance of the
/// lowest median → reproduced; the target's median is the highest of the series → inverted; otherwise not
/// reproduced. The target may be "{cpus}" (this machine's CPU count).
/// </summary>
public sealed class ArgminRule(string claim, string aspect, string metric, string target, double tolerance = 0.05)
    : VerdictRule(claim, aspect, metric)
{
    public string Target { get; } = target;
    /// <summary>The series the claim is about (null = all).</summary>
    public IReadOnlyList<string>? Series { get; init; }

    private IEnumerable<string> Judged(SweepData data) =>
        data.SeriesLabels.Where(s => Series is null || Series.Contains(s));
    public double Tolerance { get; } = tolerance;

    public override string Criterion =>
        $"{Metric}: in every series{(Series is null ? "" : $" ({string.Join(", ", Series)})")} the median at x = "
            + $"{Target} is ≤ (1 + {Tolerance:P0}) × the lowest median over x → reproduced; it is the highest median "
            + $"of the series → inverted; otherwise not reproduced";

    protected override IEnumerable<SweepPoint> Involved(SweepData data) =>
        Judged(data).Any(s => data.Find(s, Resolve(Target, data)) is not null)
            ? data.Points.Where(p => Judged(data).Contains(p.Series)) : [];

    protected override (VerdictOutcome, IEnumerable<string>) Decide(SweepData data)
    {
        var target = Resolve(Target, data);
        var evidence = new List<string>();
        int best = 0, worst = 0, n = 0;
        foreach (var series in Judged(data))
        {
            var medians = data.Points.Where(p => p.Series == series)
                .Select(p => (p, s: data.Stat(p, Metric))).Where(t => t.s is not null).ToList();
            var at = medians.FirstOrDefault(t => t.p.X == target);
            if (at.s is null) continue;
            n++;
            var min = medians.MinBy(t => t.s!.Median);
            var max = medians.MaxBy(t => t.s!.Median);
            if (at.s.Median <= (1 + Tolerance) * min.s!.Median) best++;
            else if (at.p == max.p) worst++;
            evidence.Add($"{series}: at {target} {Range(at.s)}; lowest median at {min.p.X} "
                + $"({SweepMetrics.Format(min.s.Median)}), highest at {max.p.X} "
                + $"({SweepMetrics.Format(max.s!.Median)})");
        }
        if (n == 0) return (VerdictOutcome.NotTested, [$"no series has a point at {target}"]);
        evidence.Insert(0, $"target x = {target}{(Target != target ? $" ({Target})" : "")}: best within {Tolerance:P0} "
            + $"in {best} of {n} series");
        return (best == n ? VerdictOutcome.Reproduced : worst == n ? VerdictOutcome.Inverted
            : VerdictOutcome.NotReproduced, evidence);
    }
}
