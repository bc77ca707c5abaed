namespace TraceLab.Sweeps;

/// <summary>Min / median / max of one metric over a point's successful repeats.</summary>
public sealed record Summary(int N, double Min, double Median, double Max)
{
    public static Summary? Of(IEnumerable<double> values)
    {
        var v = values.Order().ToArray();
        if (v.Length == 0) return null;
        var mid = v.Length / 2;
        // Median of an even count: the mean of the two middle values.
        var median = v.Length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
        return new Summary(v.Length, v[0], median, v[^1]);
    }

    /// <summary>True when every repeat of this point is below every repeat of <paramref name="other"/>.</summary>
    public bool EntirelyBelow(Summary other) => Max < other.Min;
}

/// <summary>A sweep's runs grouped by point, with per-metric summaries.</summary>
public sealed class SweepData(
    SweepDefinition definition, IReadOnlyList<SweepPoint> points, IReadOnlyList<SweepRunRecord> runs, int repeats)
{
    public SweepDefinition Definition { get; } = definition;
    public IReadOnlyList<SweepPoint> Points { get; } = points;
    public IReadOnlyList<SweepRunRecord> Runs { get; } = runs;
    /// <summary>Repeats requested per point.</summary>
    public int Repeats { get; } = repeats;
    /// <summary>CPUs of the machine the sweep ran on (M in "best at M active threads").</summary>
    public int Cpus { get; init; } = Environment.ProcessorCount;
    /// <summary>
    /// A parameter value in the canonical form points hold (e.g. which "mutex" → "3"); identity by default.
    /// </summary>
    public Func<string, string, string> Canonical { get; init; } = (_, value) => value;

    public SweepPoint? Find(string series, string x) =>
        Points.FirstOrDefault(p => p.Series == series && p.X == x);

    public Summary? Stat(SweepPoint point, string metric) =>
        Summary.Of(Runs.Where(r => r.Point == point.Index && r.Ok).Select(r => SweepMetrics.Value(r, metric))
            .OfType<double>());

    public Summary? Stat(string series, string x, string metric) => Find(series, x) is { } p ? Stat(p, metric) : null;

    /// <summary>The fewest successful repeats of any point: the evidence a verdict rests on.</summary>
    public int MinOkRepeats(IEnumerable<SweepPoint>? points = null) =>
        (points ?? Points).Select(p => Runs.Count(r => r.Point == p.Index && r.Ok)).DefaultIfEmpty(0).Min();

    public IEnumerable<string> SeriesLabels => Points.Select(p => p.Series).Distinct();

    public bool HasMetric(string metric) => Runs.Any(r => r.Ok && SweepMetrics.Value(r, metric) is not null);

    /// <summary>
    /// Parameters chosen per series by calibration (tm2's iterations): they tell no two points apart.
    /// </summary>
    public IReadOnlyCollection<string> Calibrated { get; init; } = [];

    /// <summary>
    /// The data as verdict rules see it: without the calibrated parameters, so points that differ only in them still
    /// pair (cs vs cs-nested at the same depth and delay). Rules compare such points per iteration.
    /// </summary>
    public SweepData ForVerdicts()
    {
        if (Calibrated.Count == 0) return this;
        var points = Points.Select(p => p with
        {
            Values = p.Values.Where(kv => !Calibrated.Contains(kv.Key, StringComparer.OrdinalIgnoreCase))
                .ToDictionary(kv => kv.Key, kv => kv.Value, StringComparer.OrdinalIgnoreCase),
        }).ToList();
        return new SweepData(Definition, points, Runs, Repeats) { Cpus = Cpus, Canonical = Canonical };
    }

    /// <summary>The calibrated parameters of a sweep's state (none before its calibration ran).</summary>
    public static IReadOnlyCollection<string> CalibratedOf(SweepState state) =>
        state.Calibration is null ? []
            : state.Calibration.Select(c => c.Parameter).Distinct(StringComparer.OrdinalIgnoreCase).ToList();
}
