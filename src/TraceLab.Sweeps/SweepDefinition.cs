using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Sweeps;

/// <summary>
/// What a sweep runs: one workload, base parameter values, one swept parameter (the x axis) and a list of series
/// (each a set of parameter values, e.g. which=cs vs which=mutex; a two-parameter grid is expanded into series).
/// Every point is (series, x value); each point runs <see cref="SweepSettings.Repeats"/> times.
/// </summary>
public sealed class SweepDefinition
{
    /// <summary>Predefined sweeps: the claim-style id (e.g. "tm4"); ad-hoc sweeps: "custom".</summary>
    public required string Name { get; init; }
    public required string Workload { get; init; }
    public required string Title { get; init; }
    public IReadOnlyList<string> Claims { get; init; } = [];
    public IReadOnlyDictionary<string, string> Base { get; init; } = new Dictionary<string, string>();
    public required string XParameter { get; init; }
    public required IReadOnlyList<string> XValues { get; init; }
    /// <summary>Axis label of the swept parameter, with its unit.</summary>
    public string? XLabel { get; init; }
    /// <summary>Log-scale x axis (e.g. active threads 1..64).</summary>
    public bool LogX { get; init; }
    /// <summary>Display names for special x values (throttle active 0 = "none").</summary>
    public IReadOnlyDictionary<string, string> XNames { get; init; } = new Dictionary<string, string>();
    public IReadOnlyList<SweepSeries> Series { get; init; } = [SweepSeries.Single];
    /// <summary>Metrics plotted, one SVG each (names from <see cref="SweepMetrics"/>).</summary>
    public IReadOnlyList<string> PlotMetrics { get; init; } = ["elapsed", "user", "system"];
    public IReadOnlyList<IVerdictRule> Verdicts { get; init; } = [];
    /// <summary>
    /// Per-series iteration counts raised before the first run so every point lasts long enough to time.
    /// </summary>
    public Calibration.IterationCalibration? Calibration { get; init; }
    /// <summary>Why these values and sizes (shown by `tracelab sweeps`).</summary>
    public string? Notes { get; init; }

    public IEnumerable<string> ParametersUsed =>
        new[] { XParameter }.Concat(Series.SelectMany(s => s.Values.Keys)).Distinct(StringComparer.OrdinalIgnoreCase);
}

/// <summary>One line in the plots: a label and the parameter values that define it.</summary>
public sealed record SweepSeries(string Label, IReadOnlyDictionary<string, string> Values)
{
    /// <summary>
    /// The x values this series runs at (null = all); e.g. "active 1..6" only for the 6-thread series.
    /// </summary>
    public IReadOnlyList<string>? OnlyX { get; init; }

    public static SweepSeries Single { get; } = new("all", new Dictionary<string, string>());

    public static SweepSeries Of(string label, params (string Name, string Value)[] values) =>
        new(label, values.ToDictionary(v => v.Name, v => v.Value, StringComparer.OrdinalIgnoreCase));

    /// <summary>
    /// The cartesian product of series dimensions: ("which", [cs, mutex]) × ("delay", [0, 1]) → 4 series.
    /// </summary>
    public static IReadOnlyList<SweepSeries> Grid(params (string Name, IReadOnlyList<string> Values)[] dimensions)
    {
        IEnumerable<List<(string, string)>> combos = [[]];
        foreach (var (name, values) in dimensions)
            combos = combos.SelectMany(c => values.Select(v => new List<(string, string)>(c) { (name, v) }));
        return combos.Select(c => Of(string.Join(
            ", ", c.Select(p => dimensions.Length == 1 ? p.Item2 : $"{p.Item1}={p.Item2}")), [.. c])).ToList();
    }
}

/// <summary>How a sweep is run (not part of what it measures).</summary>
public sealed record SweepSettings
{
    public int Repeats { get; init; } = 3;
    public bool Traced { get; init; }
    /// <summary>Seed of the per-repeat shuffle of the point order; recorded so an order can be reproduced.</summary>
    public int OrderSeed { get; init; }
    /// <summary>User overrides applied to every point (e.g. iterations), after the sweep's base values.</summary>
    public IReadOnlyDictionary<string, string> Overrides { get; init; } = new Dictionary<string, string>();
}
