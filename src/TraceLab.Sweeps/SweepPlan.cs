namespace TraceLab.Sweeps;

/// <summary>
/// Expands a definition into points and an execution order. The order is interleaved: each repeat visits every
/// point once (round-robin), in an order shuffled per repeat, so slow drift of the machine (thermal, other load)
/// spreads over all points instead of biasing the ones that ran last.
/// </summary>
public static class SweepPlan
{
    /// <param name="resolve">Validates and completes a point's values (the workload's defaults and
    /// normalization).</param>
    public static IReadOnlyList<SweepPoint> Points(SweepDefinition d, IReadOnlyDictionary<string, string> overrides,
        Func<IReadOnlyDictionary<string, string>, IReadOnlyDictionary<string, string>> resolve)
    {
        var points = new List<SweepPoint>();
        foreach (var series in d.Series)
            foreach (var x in d.XValues.Where(x => series.OnlyX is null || series.OnlyX.Contains(x)))
            {
                var values = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
                foreach (var (k, v) in d.Base) values[k] = v;
                foreach (var (k, v) in overrides) values[k] = v;
                // The swept and series parameters win over overrides: they are what the sweep is about.
                foreach (var (k, v) in series.Values) values[k] = v;
                values[d.XParameter] = x;
                points.Add(new SweepPoint(points.Count, series.Label, x, resolve(values)));
            }
        return points;
    }

    public static IReadOnlyList<PlannedRun> Order(int pointCount, int repeats, int seed)
    {
        var order = new List<PlannedRun>(pointCount * repeats);
        for (var r = 0; r < repeats; r++)
        {
            var idx = Enumerable.Range(0, pointCount).ToArray();
            // A separate generator per repeat keeps repeat r's order independent of how many repeats there are.
            new Random(unchecked(seed * 1_000_003 + r)).Shuffle(idx);
            order.AddRange(idx.Select(i => new PlannedRun(i, r)));
        }
        return order;
    }
}
