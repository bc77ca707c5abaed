using TraceLab.Sweeps;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Tests.Sweeps;

/// <summary>
/// Builds sweep data with known numbers: points from (series parameter value, x) and a list of elapsed seconds per
/// point.
/// </summary>
internal sealed class SyntheticSweep
{
    private readonly List<SweepPoint> _points = [];
    private readonly List<SweepRunRecord> _runs = [];

    public SyntheticSweep(string xParam = "threads", string seriesParam = "which")
    {
        XParam = xParam;
        SeriesParam = seriesParam;
    }

    private readonly Dictionary<string, (string Name, string Value)[]> _seriesValues = [];

    /// <summary>
    /// A series defined by several parameters (e.g. which=cs, delay=5) instead of its label as the series parameter's
    /// value.
    /// </summary>
    public SyntheticSweep Series(string label, params (string Name, string Value)[] values)
    {
        _seriesValues[label] = values;
        return this;
    }

    public string XParam { get; }
    public string SeriesParam { get; }
    public List<IVerdictRule> Rules { get; } = [];

    /// <param name="elapsed">One value per repeat (seconds) of the metric "elapsed".</param>
    public SyntheticSweep Add(string series, string x, params double[] elapsed) =>
        AddMetric(series, x, "elapsed", elapsed);

    public SyntheticSweep AddMetric(string series, string x, string metric, params double[] values)
    {
        var point = _points.FirstOrDefault(p => p.Series == series && p.X == x);
        if (point is null)
        {
            var v = new Dictionary<string, string>(
                StringComparer.OrdinalIgnoreCase)
            { [XParam] = x, ["iterations"] = "1000" };
            if (_seriesValues.TryGetValue(series, out var values0))
                foreach (var (name, value) in values0) v[name] = value;
            else if (series != SweepSeries.Single.Label) v[SeriesParam] = series;
            point = new SweepPoint(_points.Count, series, x, v);
            _points.Add(point);
        }
        for (var r = 0; r < values.Length; r++)
        {
            var run = _runs.FirstOrDefault(x => x.Point == point.Index && x.Repeat == r);
            if (run is null)
            {
                run = new SweepRunRecord
                {
                    Point = point.Index,
                    Repeat = r,
                    Sequence = _runs.Count,
                    Directory = $"runs/{point.Id}-r{r}"
                };
                _runs.Add(run);
            }
            switch (metric)
            {
                case "elapsed": run.ElapsedNs = (long)Math.Round(values[r] * 1e9); break;
                case "system": run.SystemNs = (long)Math.Round(values[r] * 1e9); break;
                default:
                    if (metric.StartsWith("traced.", StringComparison.Ordinal)) run.Traced[metric["traced.".Length..]] =
                        values[r];
                    else run.Metrics[metric] = values[r];
                    break;
            }
        }
        return this;
    }

    public SyntheticSweep Fail(string series, string x, int repeat)
    {
        var point = _points.First(p => p.Series == series && p.X == x);
        // A repeat that already has numbers becomes the failure (its numbers no longer count).
        var existing = _runs.FindIndex(r => r.Point == point.Index && r.Repeat == repeat);
        var failed = SweepRunRecord.Failed(point.Index, repeat, "synthetic failure");
        if (existing >= 0) _runs[existing] = failed;
        else _runs.Add(failed);
        return this;
    }

    public SweepDefinition Definition => new()
    {
        Name = "synthetic",
        Workload = "timemutex",
        Title = "synthetic",
        Claims = Rules.Select(r => r.Claim).Distinct().ToList(),
        XParameter = XParam,
        XValues = _points.Select(p => p.X).Distinct().ToList(),
        Series = _points.Select(p => p.Series).Distinct()
            .Select(s => s == SweepSeries.Single.Label ? SweepSeries.Single
                : _seriesValues.TryGetValue(s, out var v) ? SweepSeries.Of(s, v) : SweepSeries.Of(s, (SeriesParam, s)))
                    .ToList(),
        Verdicts = Rules,
    };

    public SweepData Data(int cpus = 2) =>
        new(Definition, _points, _runs, _runs.Count == 0 ? 0 : _runs.Max(r => r.Repeat) + 1) { Cpus = cpus };

    public Verdict Judge(IVerdictRule rule, int cpus = 2) => rule.Judge(Data(cpus));
}
