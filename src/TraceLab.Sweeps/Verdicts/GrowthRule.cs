namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// "A degrades non-linearly beyond K threads, B gracefully": per-thread cost c(x) = median(metric at x) / x;
/// growth g = mean c over the high x values / mean c over the low x values, per series. Reproduced when
/// g(A) ≥ Factor and g(B) &lt; Factor; inverted when g(B) ≥ Factor and g(A) &lt; Factor; otherwise not reproduced.
/// </summary>
public sealed class GrowthRule(
    string claim, string aspect, string metric, string degrading, string graceful, IReadOnlyList<string> low,
    IReadOnlyList<string> high, double factor = 1.5)
    : VerdictRule(claim, aspect, metric)
{
    public string Degrading { get; } = degrading;
    public string Graceful { get; } = graceful;
    public IReadOnlyList<string> Low { get; } = low;
    public IReadOnlyList<string> High { get; } = high;
    public double Factor { get; } = factor;

    public override string Criterion =>
        $"{Metric} per thread (median / x): growth = mean over x ∈ {{{string.Join(",", High)}}} ÷ mean over x ∈ "
            + $"{{{string.Join(",", Low)}}}; growth({Degrading}) ≥ {Factor:0.##} and growth({Graceful}) < "
            + $"{Factor:0.##} → reproduced; the reverse → inverted; otherwise not reproduced";

    protected override IEnumerable<SweepPoint> Involved(SweepData data) =>
        data.Points.Where(
            p => (p.Series == Degrading || p.Series == Graceful) && (Low.Contains(p.X) || High.Contains(p.X)));

    private double? Growth(SweepData data, string series, List<string> evidence)
    {
        double? PerThread(string x) => data.Stat(series, x, Metric) is { } s ? s.Median / Num(x) : null;
        var lo = Low.Select(PerThread).OfType<double>().ToList();
        var hi = High.Select(PerThread).OfType<double>().ToList();
        if (lo.Count == 0 || hi.Count == 0) return null;
        if (lo.Average() <= 0)
        {
            evidence.Add($"{series}: per-thread {Metric} is 0 at the low thread counts (below the clock's resolution): "
                + $"run more iterations");
            return null;
        }
        var g = hi.Average() / lo.Average();
        evidence.Add($"{series}: per-thread {Metric} low {SweepMetrics.Format(lo.Average())}, high "
            + $"{SweepMetrics.Format(hi.Average())}, growth {g:0.###}");
        return g;
    }

    protected override (VerdictOutcome, IEnumerable<string>) Decide(SweepData data)
    {
        var evidence = new List<string>();
        var a = Growth(data, Degrading, evidence);
        var b = Growth(data, Graceful, evidence);
        if (a is null || b is null) return (VerdictOutcome.NotTested, evidence.Append(
            "no growth for a series: it lacks the low or high thread counts, or its cost there is 0").ToList());
        var outcome = a >= Factor && b < Factor ? VerdictOutcome.Reproduced
            : b >= Factor && a < Factor ? VerdictOutcome.Inverted
            : VerdictOutcome.NotReproduced;
        return (outcome, evidence);
    }
}
