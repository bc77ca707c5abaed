using System.Globalization;
using TraceLab.Reporting.Charts;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Sweeps.Plots;

/// <summary>
/// The shape a claim expects of a plotted metric, from the verdict rules judged on it, as dashed lines: a flat
/// rule's ceiling (lowest median × (1 + tolerance) over the x values it covers), a linear-fit rule's least-squares
/// line through the medians, and a growth rule's constant per-thread cost (mean median ÷ x over its low x values,
/// times x). Rules of other kinds compare points rather than a shape, and draw nothing.
/// </summary>
public static class ExpectedShapes
{
    /// <param name="display">The series' label in the chart, from its label in the sweep.</param>
    /// <param name="position">The chart x of a swept value.</param>
    /// <param name="scale">The factor the chart applies to the metric (1000 when seconds are drawn in ms).</param>
    public static IReadOnlyList<ExpectedLine> For(SweepData data, string metric, Func<string, string> display,
        Func<string, double> position, double scale)
    {
        var lines = new List<ExpectedLine>();
        var d = data.Definition;
        var several = data.SeriesLabels.Skip(1).Any();
        foreach (var rule in d.Verdicts.OfType<VerdictRule>().Where(r => r.Metric == metric))
        {
            foreach (var series in data.SeriesLabels)
            {
                var points = data.Points.Where(p => p.Series == series)
                    .Select(p => (p, s: data.Stat(p, metric))).Where(t => t.s is not null)
                    .Select(t => (t.p.X, Median: t.s!.Median)).ToList();
                var line = rule switch
                {
                    FlatRule f => Flat(f, data, points),
                    LinearFitRule l when string.Equals(l.Along, d.XParameter, StringComparison.OrdinalIgnoreCase) =>
                        Linear(l, points),
                    GrowthRule g when series == g.Degrading || series == g.Graceful => PerThreadCost(g, points),
                    _ => null,
                };
                if (line is not { } l2) continue;
                var label = $"{rule.Claim}: {l2.Label}{(several ? $" ({display(series)})" : "")}";
                lines.Add(new ExpectedLine(label, display(series),
                    l2.Points.Select(p => (position(p.X), p.Y * scale)).ToList()));
            }
        }
        return lines;
    }

    private static (string Label, List<(string X, double Y)> Points)? Flat(FlatRule f, SweepData data,
        List<(string X, double Median)> points)
    {
        var covered = points.Where(p => f.Select(p.X, data)).ToList();
        if (covered.Count < 2) return null;
        var ceiling = covered.Min(p => p.Median) * (1 + f.Tolerance);
        return ($"flat, ≤ {1 + f.Tolerance:0.##} × lowest", covered.Select(p => (p.X, ceiling)).ToList());
    }

    private static (string Label, List<(string X, double Y)> Points)? Linear(LinearFitRule l,
        List<(string X, double Median)> points)
    {
        var numeric = Numeric(points);
        if (numeric.Select(p => p.V).Distinct().Count() < 3) return null;
        var (slope, _) = LinearFitRule.Fit(numeric.Select(p => (p.V, p.Median)).ToList());
        var mx = numeric.Average(p => p.V);
        var my = numeric.Average(p => p.Median);
        return ("linear (least squares)", numeric.Select(p => (p.X, my + slope * (p.V - mx))).ToList());
    }

    private static (string Label, List<(string X, double Y)> Points)? PerThreadCost(GrowthRule g,
        List<(string X, double Median)> points)
    {
        var numeric = Numeric(points).Where(p => p.V > 0).ToList();
        var low = numeric.Where(p => g.Low.Contains(p.X)).ToList();
        if (low.Count == 0) return null;
        var cost = low.Average(p => p.Median / p.V);
        return ("same cost per thread as at low x", numeric.Select(p => (p.X, cost * p.V)).ToList());
    }

    private static List<(string X, double V, double Median)> Numeric(List<(string X, double Median)> points) =>
        points.Where(p => double.TryParse(p.X, NumberStyles.Float, CultureInfo.InvariantCulture, out _))
            .Select(p => (p.X, double.Parse(p.X, CultureInfo.InvariantCulture), p.Median)).ToList();
}
