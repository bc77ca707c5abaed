namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// "Flat beyond 2M": over the selected x values in every series, max median ÷ min median ≤ 1 + Tolerance →
/// reproduced; otherwise not reproduced.
/// </summary>
public sealed class FlatRule(
    string claim, string aspect, string metric, Func<string, SweepData, bool> select, string selection,
    double tolerance = 0.25)
    : VerdictRule(claim, aspect, metric)
{
    public Func<string, SweepData, bool> Select { get; } = select;
    public string Selection { get; } = selection;
    public double Tolerance { get; } = tolerance;

    public override string Criterion =>
        $"{Metric} over x in {Selection}: highest median ÷ lowest median ≤ {1 + Tolerance:0.##} in every series → "
            + $"reproduced; otherwise not reproduced";

    protected override IEnumerable<SweepPoint> Involved(SweepData data) => data.Points.Where(p => Select(p.X, data));

    protected override (VerdictOutcome, IEnumerable<string>) Decide(SweepData data)
    {
        var evidence = new List<string>();
        int flat = 0, n = 0;
        foreach (var g in Involved(data).GroupBy(p => p.Series))
        {
            var medians = g.Select(p => (p, s: data.Stat(p, Metric))).Where(t => t.s is not null).ToList();
            if (medians.Count < 2) continue;
            n++;
            var lo = medians.Min(t => t.s!.Median);
            var hi = medians.Max(t => t.s!.Median);
            var spread = lo > 0 ? hi / lo : double.PositiveInfinity;
            if (spread <= 1 + Tolerance) flat++;
            evidence.Add($"{g.Key}: medians "
                + $"{string.Join(", ", medians.Select(t => $"{t.p.X}→{SweepMetrics.Format(t.s!.Median)}"))}; highest ÷ "
                + $"lowest {spread:0.###}");
        }
        if (n == 0) return (VerdictOutcome.NotTested, [$"fewer than 2 points in {Selection}"]);
        return (flat == n ? VerdictOutcome.Reproduced : VerdictOutcome.NotReproduced, evidence);
    }
}
