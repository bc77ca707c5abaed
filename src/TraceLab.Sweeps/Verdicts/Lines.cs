using System.Globalization;

namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// Lines of points for shape rules: the points that differ only in one numeric parameter ("along"), ordered by it,
/// paired between two values of another parameter (e.g. which=cs-nested vs which=cs at the same delay), and each
/// line's curves, one per repeat.
/// </summary>
public static class Lines
{
    /// <summary>
    /// Pairs of lines: for every pair of points from <paramref name="pairs"/>, grouped by their values other than
    /// <paramref name="along"/>; only lines with at least <paramref name="minPoints"/> numeric values of it.
    /// </summary>
    public static IReadOnlyList<(IReadOnlyList<SweepPoint> A, IReadOnlyList<SweepPoint> B)> Paired(
        SweepData data, PointPairs pairs, string along, Func<string, string> resolve, int minPoints = 3) =>
        pairs.Find(data, resolve)
            .Where(p => p.A.Values.TryGetValue(along, out var v) && IsNum(v))
            .GroupBy(p => Key(p.A, along))
            .Select(g => g.OrderBy(p => Num(p.A.Values[along])).ToList())
            .Where(g => g.Count >= minPoints)
            .Select(g => ((IReadOnlyList<SweepPoint>)g.Select(p => p.A).ToList(),
                (IReadOnlyList<SweepPoint>)g.Select(p => p.B).ToList()))
            .ToList();

    /// <summary>
    /// One curve per repeat number: the metric of the successful run with that repeat number at every point of the
    /// line (repeats with a failed or missing run at any point are left out, a curve needs every point).
    /// </summary>
    public static IReadOnlyList<double[]> RepeatCurves(SweepData data, IReadOnlyList<SweepPoint> line, string metric)
    {
        var curves = new List<double[]>();
        var repeats = data.Runs.Where(r => line.Any(p => p.Index == r.Point)).Select(r => r.Repeat).Distinct().Order();
        foreach (var repeat in repeats)
        {
            var curve = new double[line.Count];
            var complete = true;
            for (var i = 0; i < line.Count && complete; i++)
            {
                var run = data.Runs.FirstOrDefault(r => r.Point == line[i].Index && r.Repeat == repeat && r.Ok);
                if (run is not null && SweepMetrics.Value(run, metric) is { } v) curve[i] = v;
                else complete = false;
            }
            if (complete) curves.Add(curve);
        }
        return curves;
    }

    /// <summary>
    /// The values of a line's points other than <paramref name="along"/> and <paramref name="pairParam"/>, for
    /// evidence.
    /// </summary>
    public static string Label(SweepPoint p, string along, string pairParam, SweepData data)
    {
        var varying = p.Values.Where(kv => !Is(kv.Key, along) && !Is(kv.Key, pairParam)
            && data.Points.Select(q => q.Values.GetValueOrDefault(kv.Key)).Distinct().Count() > 1);
        return string.Join(", ", varying.Select(kv => $"{kv.Key}={kv.Value}")) is { Length: > 0 } s ? s : "all points";
    }

    public static double Num(string x) => double.Parse(x, CultureInfo.InvariantCulture);

    private static bool IsNum(string x) => double.TryParse(x, NumberStyles.Float, CultureInfo.InvariantCulture, out _);

    private static bool Is(string a, string b) => string.Equals(a, b, StringComparison.OrdinalIgnoreCase);

    private static string Key(SweepPoint p, string along) =>
        string.Join(
            "|", p.Values.Where(kv => !Is(kv.Key, along)).OrderBy(kv => kv.Key, StringComparer.OrdinalIgnoreCase)
            .Select(kv => $"{kv.Key}={kv.Value}"));
}
