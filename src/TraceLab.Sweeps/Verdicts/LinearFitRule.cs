namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// "Grows about linearly with P": for every group of points that differ only in P (≥ 3 distinct values), a
/// least-squares line through (P, median metric). Reproduced when every group has slope &gt; 0 and R² ≥ MinR2;
/// inverted when every group has slope &lt; 0 and R² ≥ MinR2; otherwise not reproduced.
/// </summary>
public sealed class LinearFitRule(string claim, string aspect, string metric, string along, double minR2 = 0.9)
    : VerdictRule(claim, aspect, metric)
{
    public string Along { get; } = along;
    public double MinR2 { get; } = minR2;

    public override string Criterion =>
        $"{Metric} vs {Along}: least-squares fit of the medians in every group of points that differ only in {Along}; "
            + $"slope > 0 and R² ≥ {MinR2:0.##} in every group → reproduced; slope < 0 and R² ≥ {MinR2:0.##} in every "
            + $"group → inverted; otherwise not reproduced";

    protected override IEnumerable<SweepPoint> Involved(SweepData data) => Groups(data).SelectMany(g => g);

    private IEnumerable<List<SweepPoint>> Groups(SweepData data) =>
        data.Points.Where(p => p.Values.TryGetValue(Along, out var v) && IsNum(v))
            .GroupBy(p =>
                string.Join("|", p.Values.Where(kv => !string.Equals(kv.Key, Along, StringComparison.OrdinalIgnoreCase))
                .OrderBy(kv => kv.Key, StringComparer.OrdinalIgnoreCase).Select(kv => $"{kv.Key}={kv.Value}")))
            .Select(g => g.ToList())
            .Where(g => g.Select(p => p.Values[Along]).Distinct().Count() >= 3);

    protected override (VerdictOutcome, IEnumerable<string>) Decide(SweepData data)
    {
        var evidence = new List<string>();
        int up = 0, down = 0, n = 0;
        foreach (var g in Groups(data))
        {
            var pts = g.Select(p => (x: Num(p.Values[Along]), s: data.Stat(p, Metric))).Where(t => t.s is not null)
                .Select(t => (t.x, y: t.s!.Median)).ToList();
            if (pts.Count < 3) continue;
            n++;
            var (slope, r2) = Fit(pts);
            if (slope > 0 && r2 >= MinR2) up++;
            if (slope < 0 && r2 >= MinR2) down++;
            var label = Label(g[0], data);
            evidence.Add($"{label}: slope {SweepMetrics.Format(slope)} per unit of {Along}, R² {r2:0.###} "
                + $"({string.Join(", ", pts.Select(p => $"{p.x:0.##}→{SweepMetrics.Format(p.y)}"))})");
        }
        if (n == 0) return (VerdictOutcome.NotTested, [$"no group of ≥ 3 points differing only in {Along}"]);
        evidence.Insert(0, $"{up} of {n} groups rise linearly (R² ≥ {MinR2:0.##}), {down} fall");
        return (up == n ? VerdictOutcome.Reproduced : down == n ? VerdictOutcome.Inverted
            : VerdictOutcome.NotReproduced, evidence);
    }

    // A group is named by the parameters the sweep varies (besides the fitted one); constant ones would drown it.
    private string Label(SweepPoint p, SweepData data) =>
        string.Join(", ", p.Values.Where(kv => !string.Equals(kv.Key, Along, StringComparison.OrdinalIgnoreCase)
            && data.Points.Select(q => q.Values.GetValueOrDefault(kv.Key)).Distinct().Count() > 1)
            .Select(kv => $"{kv.Key}={kv.Value}")) is { Length: > 0 } s ? s : p.Series;

    /// <summary>Ordinary least squares: slope and coefficient of determination (1 when every y is equal).</summary>
    public static (double Slope, double R2) Fit(IReadOnlyList<(double X, double Y)> pts)
    {
        var mx = pts.Average(p => p.X);
        var my = pts.Average(p => p.Y);
        double sxy = 0, sxx = 0, syy = 0;
        foreach (var (x, y) in pts)
        {
            sxy += (x - mx) * (y - my);
            sxx += (x - mx) * (x - mx);
            syy += (y - my) * (y - my);
        }
        if (sxx == 0) return (0, 0);
        var slope = sxy / sxx;
        var r2 = syy == 0 ? 1 : sxy * sxy / (sxx * syy);
        return (slope, r2);
    }
}
