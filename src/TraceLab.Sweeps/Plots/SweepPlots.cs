using System.Globalization;
using TraceLab.Charts;
using TraceLab.Reporting.Charts;

namespace TraceLab.Sweeps.Plots;

/// <summary>
/// One chart per plotted metric of a sweep: x = the swept value, one series per variant, min–max bands, and the
/// expected shape of the claims judged on that metric (<see cref="ExpectedShapes"/>). Drawn by ScottPlot as SVG.
/// </summary>
public static class SweepPlots
{
    public static IEnumerable<(string File, string Metric, string Svg)> Render(SweepData data)
    {
        var d = data.Definition;
        foreach (var metric in d.PlotMetrics.Where(data.HasMetric))
            yield return ($"{d.Name}-{metric.Replace('.', '-')}.svg", metric, LineChartPlot.Svg(Chart(data, metric)));
    }

    public static LineChart Chart(SweepData data, string metric)
    {
        var d = data.Definition;
        var categorical =
            data.Points.Any(p => !double.TryParse(p.X, NumberStyles.Float, CultureInfo.InvariantCulture, out _));
        var numeric =
            categorical ? [] : data.Points.Select(p => double.Parse(p.X, CultureInfo.InvariantCulture)).ToList();
        var maxPositive = numeric.Where(x => x > 0).DefaultIfEmpty(1).Max();
        var order = d.XValues.Select((x, i) => (x, i)).ToDictionary(t => t.x, t => (double)t.i);
        double Position(string x)
        {
            if (categorical) return order.TryGetValue(x, out var i) ? i : 0;
            var v = double.Parse(x, CultureInfo.InvariantCulture);
            // A log axis has no 0: a special value like throttle's "0 = no semaphore" goes one step past the largest.
            return d.LogX && v <= 0 ? maxPositive * 2 : v;
        }

        var label = SweepMetrics.Label(metric);
        var maxValue = data.Points.Select(p => data.Stat(p, metric)?.Max ?? 0).DefaultIfEmpty(0).Max();
        // Sub-second times read better in milliseconds.
        var scale = label.EndsWith("(s)", StringComparison.Ordinal) && maxValue < 1 ? 1000.0 : 1.0;
        if (scale != 1) label = label[..^3] + "(ms)";

        var series = new List<ChartSeries>();
        foreach (var s in data.SeriesLabels)
        {
            var pts = new List<ChartPoint>();
            foreach (var p in data.Points.Where(p => p.Series == s))
            {
                if (data.Stat(p, metric) is not { } st) continue;
                var xl = d.XNames.TryGetValue(p.X, out var name) ? name : p.X;
                pts.Add(new ChartPoint(Position(p.X), xl, st.Median * scale, st.Min * scale, st.Max * scale));
            }
            // A sweep without variants has one unnamed series: the legend names the workload instead.
            series.Add(new ChartSeries(s == SweepSeries.Single.Label ? d.Workload : s, pts));
        }
        // Series orders of magnitude apart (cs vs mutex) would leave the lower one flat on the axis: use a log y axis.
        var medians = series.SelectMany(x => x.Points).Select(p => p.Median).Where(v => v > 0).ToList();
        var logY = medians.Count > 1 && medians.Max() / medians.Min() > 50;
        var expected = ExpectedShapes.For(data, metric,
            s => s == SweepSeries.Single.Label ? d.Workload : s, Position, scale);
        var claims = d.Claims.Count > 0 ? string.Join(", ", d.Claims) + ": " : "";
        return new LineChart
        {
            // The x axis is labelled anyway: a title that would run past the legend leaves out "vs X".
            Title = $"{claims}{label} vs {d.XLabel ?? d.XParameter}" is { Length: <= 72 } full ? full
                : $"{claims}{label}",
            Subtitle = $"{d.Workload} — {d.Title}; median of {data.Repeats} repeats, band = min–max" +
                (expected.Count > 0 ? ", dashed = the claim's expected shape" : ""),
            XLabel = d.XLabel ?? d.XParameter,
            YLabel = label,
            LogX = d.LogX && !categorical,
            LogY = logY,
            Categorical = categorical,
            Series = series,
            Expected = expected,
        };
    }
}
