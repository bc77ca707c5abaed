namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// "A costs more than B but degrades at the same point" (TM3). Along a numeric parameter P, a line's degradation
/// point is the first P value whose segment slope (Δ metric ÷ Δ P from the previous P value) exceeds
/// <see cref="Knee"/> × max(slope of the first segment, 0): the cost starts to grow faster than it did at the
/// start. When no segment does, the point is "none" (one position past the last P value). Each repeat gives its own
/// point (the line's values from the runs with that repeat number), so a line has a min–max range of positions.
/// Lines are paired by <see cref="Pairs"/> (A and B at the same values of every other parameter).
/// Reproduced when, in every pair, all positions of both lines lie within <see cref="Steps"/> grid steps of each
/// other; inverted when, in every pair, the two ranges are more than <see cref="Steps"/> steps apart (the point
/// surely moved); otherwise not reproduced. A line with fewer than three complete repeat curves → insufficient repeats.
/// </summary>
public sealed class DegradationPointRule(
    string claim, string aspect, string metric, PointPairs pairs, string along, double knee = 1.5, int steps = 1)
    : VerdictRule(claim, aspect, metric)
{
    public PointPairs Pairs { get; } = pairs;
    public string Along { get; } = along;
    public double Knee { get; } = knee;
    /// <summary>
    /// How many grid steps apart the two lines' degradation points may be and still count as "the same point".
    /// </summary>
    public int Steps { get; } = steps;

    public override string Criterion =>
        $"{Metric} along {Along}: degradation point of a line = first {Along} whose segment slope exceeds {Knee:0.##} "
            + $"× the first segment's slope (none if no segment does), " +
        $"one per repeat; in every line pair ({Pairs.Describe}, other parameters equal) all points of both lines "
            + $"within {StepsText} → reproduced; " +
        $"{(Steps == 0 ? "the two min–max ranges disjoint" : $"the two min–max ranges more than {StepsText} apart")} "
            + $"in every pair → inverted; otherwise not reproduced";

    private string StepsText => Steps == 0 ? "the same grid point" : $"{Steps} grid step{(Steps == 1 ? "" : "s")}";

    private IReadOnlyList<(IReadOnlyList<SweepPoint> A, IReadOnlyList<SweepPoint> B)> Find(SweepData data) =>
        Lines.Paired(data, Pairs, Along, v => Resolve(Pairs.Param, v, data));

    protected override IEnumerable<SweepPoint> Involved(SweepData data) => Find(data).SelectMany(p => p.A.Concat(p.B));

    protected override (VerdictOutcome, IEnumerable<string>) Decide(SweepData data)
    {
        var evidence = new List<string>();
        int same = 0, moved = 0, n = 0;
        foreach (var (a, b) in Find(data))
        {
            var pa = Positions(data, a);
            var pb = Positions(data, b);
            var label = Lines.Label(a[0], Along, Pairs.Param, data);
            if (pa.Count < MinimumRepeats || pb.Count < MinimumRepeats)
                return (VerdictOutcome.InsufficientRepeats, [$"{label}: {Math.Min(pa.Count, pb.Count)} complete repeat "
                    + $"curve(s) (every point of the line in the same repeat); a verdict needs {MinimumRepeats}"]);
            n++;
            var span = Math.Max(pa.Max(), pb.Max()) - Math.Min(pa.Min(), pb.Min());
            var gap = Math.Max(pa.Min(), pb.Min()) - Math.Min(pa.Max(), pb.Max());
            var isSame = span <= Steps;
            var isMoved = gap > Steps;
            if (isSame) same++;
            if (isMoved) moved++;
            evidence.Add($"{label}: {Pairs.A} degrades at {Describe(a, pa)}, {Pairs.B} at {Describe(b, pb)} → "
                + $"{(isSame ? "same point" : isMoved ? "moved" : "no decision")}");
        }
        if (n == 0) return (VerdictOutcome.NotTested, [$"no pair of lines with ≥ 3 values of {Along}"]);
        evidence.Insert(0, $"{same} of {n} line pairs degrade at the same point (within {StepsText}), {moved} surely "
            + $"at different points");
        return (same == n ? VerdictOutcome.Reproduced : moved == n ? VerdictOutcome.Inverted
            : VerdictOutcome.NotReproduced, evidence);
    }

    /// <summary>The degradation position (index of the P value; Count = none) of each complete repeat curve.</summary>
    private List<int> Positions(SweepData data, IReadOnlyList<SweepPoint> line)
    {
        var x = line.Select(p => Num(p.Values[Along])).ToArray();
        return Lines.RepeatCurves(data, line, Metric).Select(y => Position(x, y, Knee)).ToList();
    }

    /// <summary>First index i ≥ 2 with slope(i−1 → i) &gt; knee × max(slope(0 → 1), 0); x.Length when none.</summary>
    public static int Position(IReadOnlyList<double> x, IReadOnlyList<double> y, double knee)
    {
        var baseline = Math.Max((y[1] - y[0]) / (x[1] - x[0]), 0);
        for (var i = 2; i < x.Count; i++)
            if ((y[i] - y[i - 1]) / (x[i] - x[i - 1]) > knee * baseline) return i;
        return x.Count;
    }

    private string Describe(IReadOnlyList<SweepPoint> line, List<int> positions)
    {
        string At(int i) => i >= line.Count ? "none" : line[i].Values[Along];
        var lo = positions.Min();
        var hi = positions.Max();
        var range = lo == hi ? $"{Along} {At(lo)}" : $"{Along} {At(lo)}–{At(hi)}";
        return $"{range} (per repeat: {string.Join(", ", positions.Select(At))})";
    }
}
