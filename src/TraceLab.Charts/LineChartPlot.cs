using System.Globalization;
using ScottPlot;
using TraceLab.Reporting.Charts;

namespace TraceLab.Charts;

/// <summary>
/// A sweep's <see cref="LineChart"/> as a ScottPlot plot: per series a min–max band, a line through the medians with
/// markers, and the claim's expected shape dashed in the series' colour. Log axes are drawn as log values with
/// labels at 1, 2, 5 × 10^k (y) or the swept values (x).
/// </summary>
public static class LineChartPlot
{
    public const int Width = 960, Height = 540;

    public static Plot Build(LineChart chart)
    {
        var plot = new Plot();
        plot.Title(chart.Subtitle is null ? chart.Title : chart.Title + "\n" + Wrap(chart.Subtitle, 100), 13);
        var xs = chart.Series.SelectMany(s => s.Points).Select(p => (p.X, p.XLabel)).Distinct().OrderBy(p => p.X)
            .ToList();
        var index = xs.Select((p, i) => (p.X, i)).GroupBy(t => t.X).ToDictionary(g => g.Key, g => g.First().i);
        double X(double x) => chart.Categorical ? index.GetValueOrDefault(x) : chart.LogX ? Math.Log2(x) : x;
        var floor = chart.Series.SelectMany(s => s.Points).SelectMany(p => new[] { p.Min, p.Median })
            .Where(v => v > 0).DefaultIfEmpty(1).Min();
        // Values at or below 0 cannot sit on a log axis: they sit on its floor.
        double Y(double y) => chart.LogY ? Math.Log10(Math.Max(y, floor)) : y;

        for (var i = 0; i < chart.Series.Count; i++)
        {
            var s = chart.Series[i];
            var color = ChartStyle.ColorOf(i);
            var pts = s.Points.OrderBy(p => p.X).ToList();
            if (pts.Count == 0) continue;
            var band = plot.Add.FillY(pts.Select(p => X(p.X)).ToArray(), pts.Select(p => Y(p.Min)).ToArray(),
                pts.Select(p => Y(p.Max)).ToArray());
            band.FillColor = color.WithAlpha(0.18);
            band.LineColor = color.WithAlpha(0.35);
            var line = plot.Add.Scatter(pts.Select(p => X(p.X)).ToArray(), pts.Select(p => Y(p.Median)).ToArray(),
                color);
            line.LineWidth = 2;
            line.MarkerSize = 7;
            line.LegendText = s.Label;
        }
        foreach (var e in chart.Expected)
        {
            var i = chart.Series.Select((s, k) => (s.Label, k)).FirstOrDefault(t => t.Label == e.Series).k;
            var dashed = plot.Add.ScatterLine(e.Points.Select(p => X(p.X)).ToArray(),
                e.Points.Select(p => Y(p.Y)).ToArray(), ChartStyle.ColorOf(i));
            dashed.LinePattern = LinePattern.Dashed;
            dashed.LineWidth = 1.5f;
            dashed.LegendText = e.Label;
        }

        var xTicks = new ScottPlot.TickGenerators.NumericManual();
        var lastLabel = double.NegativeInfinity;
        foreach (var (x, label) in xs)
        {
            // Crowded ticks (log scale near the top) keep their mark but drop labels that would collide.
            var at = X(x);
            var span = Math.Max(1e-9, X(xs[^1].X) - X(xs[0].X));
            if ((at - lastLabel) / span * 700 < 7.5 * Math.Max(2, label.Length)) xTicks.AddMinor(at);
            else
            {
                xTicks.AddMajor(at, label);
                lastLabel = at;
            }
        }
        plot.Axes.Bottom.TickGenerator = xTicks;
        if (chart.LogY)
        {
            var top = chart.Series.SelectMany(s => s.Points).Select(p => Math.Max(p.Max, p.Median))
                .DefaultIfEmpty(1).Max();
            var yTicks = new ScottPlot.TickGenerators.NumericManual();
            foreach (var t in NiceScale.LogTicks(floor, top)) yTicks.AddMajor(Math.Log10(t), TickText(t));
            plot.Axes.Left.TickGenerator = yTicks;
        }
        plot.XLabel(chart.XLabel + (chart.LogX ? " (log scale)" : ""));
        plot.YLabel(chart.YLabel + (chart.LogY ? " (log scale)" : ""));
        // Inside the data area: a legend beside it would narrow the plot and push the centred title off the image.
        plot.ShowLegend(Alignment.UpperLeft);
        return plot;
    }

    /// <summary>Breaks <paramref name="text"/> at spaces into lines of at most <paramref name="width"/>
    /// characters.</summary>
    private static string Wrap(string text, int width)
    {
        var lines = new List<string>();
        var line = "";
        foreach (var word in text.Split(' '))
        {
            if (line.Length > 0 && line.Length + 1 + word.Length > width)
            {
                lines.Add(line);
                line = word;
            }
            else line = line.Length == 0 ? word : line + " " + word;
        }
        lines.Add(line);
        return string.Join("\n", lines);
    }

    public static string Svg(LineChart chart) => Build(chart).GetSvgXml(Width, Height);

    private static string TickText(double v) => v == 0 ? "0"
        : v.ToString(Math.Abs(v) >= 10000 ? "#,0" : "0.####", CultureInfo.InvariantCulture);
}
