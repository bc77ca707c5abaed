using System.Globalization;

namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// "A grows much faster than B" as a power law (TP2: serial elapsed ~ the sum 1..N, concurrent ~ the longest, N):
/// per repeat, the exponent of a line is the least-squares slope of ln(metric) against ln(P). The expected exponent
/// of each side is the same fit through the side's model (e.g. N(N+1)/2 and N) at the line's P values.
/// Reproduced when, in every line pair, every exponent of A is within <see cref="Tolerance"/> of A's expected one,
/// every exponent of B within <see cref="Tolerance"/> of B's, and min(A) − max(B) ≥ <see cref="Margin"/> (the
/// min–max ranges over repeats are at least that far apart); inverted when in every pair max(A) &lt; min(B) (A grows
/// more slowly); otherwise not reproduced. A line with fewer than three complete repeat curves → insufficient repeats.
/// </summary>
public sealed class GrowthExponentRule(
    string claim, string aspect, string metric, PointPairs pairs, string along, GrowthModel a, GrowthModel b)
    : VerdictRule(claim, aspect, metric)
{
    public PointPairs Pairs { get; } = pairs;
    public string Along { get; } = along;
    public GrowthModel ModelA { get; } = a;
    public GrowthModel ModelB { get; } = b;
    public double Tolerance { get; init; } = 0.25;
    public double Margin { get; init; } = 0.5;

    public override string Criterion =>
        $"{Metric} vs {Along}: exponent = least-squares slope of ln({Metric}) against ln({Along}), one per repeat; " +
        $"{Pairs.A} within ±{Tolerance:0.##} of the exponent of {ModelA.Formula}, {Pairs.B} within ±{Tolerance:0.##} "
            + $"of that of {ModelB.Formula} " +
        $"(fitted at the same {Along} values), and min exponent({Pairs.A}) − max exponent({Pairs.B}) ≥ {Margin:0.##} → "
            + $"reproduced; " +
        $"max exponent({Pairs.A}) < min exponent({Pairs.B}) → inverted; otherwise not reproduced";

    private IReadOnlyList<(IReadOnlyList<SweepPoint> A, IReadOnlyList<SweepPoint> B)> Find(SweepData data) =>
        Lines.Paired(data, Pairs, Along, v => Resolve(Pairs.Param, v, data));

    protected override IEnumerable<SweepPoint> Involved(SweepData data) => Find(data).SelectMany(p => p.A.Concat(p.B));

    protected override (VerdictOutcome, IEnumerable<string>) Decide(SweepData data)
    {
        var evidence = new List<string>();
        int holds = 0, inverted = 0, n = 0;
        foreach (var (a, b) in Find(data))
        {
            var x = a.Select(p => Num(p.Values[Along])).ToArray();
            var label = Lines.Label(a[0], Along, Pairs.Param, data);
            if (x.Any(v => v <= 0))
                return (VerdictOutcome.NotTested, [$"{label}: {Along} must be positive for a log-log fit"]);
            var ea = Exponents(data, a, x);
            var eb = Exponents(data, b, x);
            if (ea is null || eb is null)
                return (VerdictOutcome.NotTested, [$"{label}: {Metric} is 0 or negative in some run (no logarithm)"]);
            if (ea.Count < MinimumRepeats || eb.Count < MinimumRepeats)
                return (VerdictOutcome.InsufficientRepeats, [$"{label}: {Math.Min(ea.Count, eb.Count)} complete repeat "
                    + $"curve(s) (every point of the line in the same repeat); a verdict needs {MinimumRepeats}"]);
            n++;
            var expectA = Exponent(x, x.Select(ModelA.Value).ToArray());
            var expectB = Exponent(x, x.Select(ModelB.Value).ToArray());
            var shapeA = ea.All(e => Math.Abs(e - expectA) <= Tolerance);
            var shapeB = eb.All(e => Math.Abs(e - expectB) <= Tolerance);
            var apart = ea.Min() - eb.Max();
            var ok = shapeA && shapeB && apart >= Margin;
            var inv = ea.Max() < eb.Min();
            if (ok) holds++;
            if (inv) inverted++;
            var outside = ", outside ±" + Tolerance.ToString("0.##", CultureInfo.InvariantCulture);
            evidence.Add($"{label}: exponent {Pairs.A} {Spread(ea)} (expected "
                + $"{expectA:0.##}{(shapeA ? "" : outside)}), " +
                $"{Pairs.B} {Spread(eb)} (expected "
                    + $"{expectB:0.##}{(shapeB ? "" : outside)}), " +
                $"min({Pairs.A}) − max({Pairs.B}) = {apart:0.###} → "
                    + $"{(ok ? "holds" : inv ? "opposite" : "no decision")}");
        }
        if (n == 0) return (VerdictOutcome.NotTested, [$"no pair of lines with ≥ 3 values of {Along}"]);
        evidence.Insert(
            0, $"{holds} of {n} line pairs have the expected growth exponents, {inverted} the opposite order");
        return (holds == n ? VerdictOutcome.Reproduced : inverted == n ? VerdictOutcome.Inverted
            : VerdictOutcome.NotReproduced, evidence);
    }

    /// <returns>Null when a value has no logarithm.</returns>
    private List<double>? Exponents(SweepData data, IReadOnlyList<SweepPoint> line, double[] x)
    {
        var result = new List<double>();
        foreach (var y in Lines.RepeatCurves(data, line, Metric))
        {
            if (y.Any(v => v <= 0)) return null;
            result.Add(Exponent(x, y));
        }
        return result;
    }

    /// <summary>Least-squares slope of ln y against ln x.</summary>
    public static double Exponent(IReadOnlyList<double> x, IReadOnlyList<double> y) =>
        LinearFitRule.Fit(x.Zip(y, (a, b) => (Math.Log(a), Math.Log(b))).ToList()).Slope;

    private static string Spread(List<double> e) =>
        e.Min().ToString("0.###", CultureInfo.InvariantCulture) + "–" + e.Max()
            .ToString("0.###", CultureInfo.InvariantCulture);
}

/// <summary>
/// An expected growth shape: the cost at parameter value x (any scale) and its formula for the report.
/// </summary>
public sealed record GrowthModel(string Formula, Func<double, double> Value)
{
    /// <summary>Serial execution of computations lasting 1, 2, …, N units: the sum N(N+1)/2.</summary>
    public static GrowthModel SumOneToN { get; } = new("N(N+1)/2 (serial: the sum of 1..N)", n => n * (n + 1) / 2);

    /// <summary>Concurrent execution with no limit: the longest computation, N units.</summary>
    public static GrowthModel Longest { get; } = new("N (concurrent: the longest)", n => n);
}
