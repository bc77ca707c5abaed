using System.Globalization;
using ScottPlot;
using TraceLab.Reporting.Charts;

namespace TraceLab.Charts;

/// <summary>
/// The report's charts as ScottPlot plots, built from the chart models alone (so what is plotted can be compared with
/// the model, and the model with the analyses: tests/TraceLab.Tests/Charts).
/// </summary>
public static class ReportChartPlots
{
    /// <summary>
    /// Grouped bars, one colour per thread or object: x = log2 duration bins, y = share of that series' samples (so
    /// a thread with few wakeups compares with one with many; counts are in the legend).
    /// </summary>
    public static Plot Histogram(HistogramChart chart)
    {
        var plot = ChartStyle.NewPlot(chart.Title);
        var indexes = chart.Series.SelectMany(s => s.Bins).Select(b => LogBins.IndexOf(b.LowNs)).DefaultIfEmpty(0)
            .ToList();
        int lowest = indexes.Min(), highest = indexes.Max();
        var n = chart.Series.Count;
        var width = 0.84 / Math.Max(1, n);
        for (var j = 0; j < n; j++)
        {
            var s = chart.Series[j];
            var bars = s.Bins.Where(b => b.Count > 0).Select(b => new Bar
            {
                Position = LogBins.IndexOf(b.LowNs) + (j - (n - 1) / 2.0) * width,
                Value = 100.0 * b.Count / Math.Max(1, s.Total),
                Size = width,
                FillColor = ChartStyle.ColorOf(j),
                LineWidth = 0,
            }).ToList();
            var bp = plot.Add.Bars(bars);
            bp.LegendText = string.Create(CultureInfo.InvariantCulture, $"{s.Label}: {s.Total:N0}");
        }
        // A tick per power of two would crowd the axis: label every other one, each with its duration.
        var ticks = new ScottPlot.TickGenerators.NumericManual();
        var step = highest - lowest > 10 ? 2 : 1;
        for (var i = lowest; i <= highest + 1; i++)
        {
            if ((i - lowest) % step == 0) ticks.AddMajor(i - 0.5, ChartStyle.Duration(LogBins.LowOf(i)));
            else ticks.AddMinor(i - 0.5);
        }
        plot.Axes.Bottom.TickGenerator = ticks;
        plot.XLabel($"{chart.XLabel} (log2 bins, bin = [low, 2 × low))");
        plot.YLabel("% of the series' samples");
        plot.Axes.SetLimitsX(lowest - 0.6, highest + 0.6);
        plot.Axes.Margins(bottom: 0);
        plot.ShowLegend(Alignment.UpperRight);
        if (chart.Omitted > 0) Footnote(plot, $"{chart.Omitted} more not shown");
        return plot;
    }

    /// <summary>Cells coloured by log10(1 + count), each labelled with its count.</summary>
    public static Plot Heatmap(HeatmapChart chart)
    {
        var plot = ChartStyle.NewPlot(chart.Title);
        int rows = chart.Wakees.Count, cols = chart.Wakers.Count;
        var intensity = new double[rows, cols];
        for (var r = 0; r < rows; r++)
            for (var c = 0; c < cols; c++)
                intensity[r, c] = Math.Log10(1 + chart.Cells[r][c]);
        var hm = plot.Add.Heatmap(intensity);
        hm.Colormap = new ScottPlot.Colormaps.Viridis();
        // Row 0 (the thread woken most) at the top: cell (r, c) spans x in [c - 0.5, c + 0.5], y around rows-1-r.
        hm.Rectangle = new CoordinateRect(-0.5, cols - 0.5, -0.5, rows - 0.5);
        var max = chart.Cells.SelectMany(r => r).DefaultIfEmpty(0).Max();
        for (var r = 0; r < rows; r++)
            for (var c = 0; c < cols; c++)
            {
                var v = chart.Cells[r][c];
                if (v == 0) continue;
                var t = plot.Add.Text(v.ToString("N0", CultureInfo.InvariantCulture), c, rows - 1 - r);
                t.Alignment = Alignment.MiddleCenter;
                t.LabelFontSize = 11;
                // Viridis is dark at the low end: light text there, dark text on the bright end.
                t.LabelFontColor = Math.Log10(1 + v) > 0.6 * Math.Log10(1 + max) ? Colors.Black : Colors.White;
            }
        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual(
            Enumerable.Range(0, cols).Select(c => (double)c).ToArray(),
            chart.Wakers.Select(w => Short(w, 16).Replace(" (", "\n(", StringComparison.Ordinal)).ToArray());
        plot.Axes.Left.TickGenerator = new ScottPlot.TickGenerators.NumericManual(
            Enumerable.Range(0, rows).Select(r => (double)(rows - 1 - r)).ToArray(),
            chart.Wakees.Select(w => Short(w, 28)).ToArray());
        plot.XLabel("waker");
        plot.YLabel("woken thread");
        plot.Axes.SetLimits(-0.5, cols - 0.5, -0.5, rows - 0.5);
        var bar = plot.Add.ColorBar(hm);
        bar.Label = "log10(1 + wakeups)";
        if (chart.Omitted > 0) Footnote(plot, $"{chart.Omitted} more woken threads not shown");
        return plot;
    }

    /// <summary>One stacked bar per time bucket: running at the bottom, then runnable, then blocked.</summary>
    public static Plot States(StateBarsChart chart)
    {
        var plot = ChartStyle.NewPlot(chart.Title);
        Color[] colors = [Color.FromHex("#2ca02c"), Color.FromHex("#ff7f0e"), Color.FromHex("#c7c7c7")];
        var bucketMs = chart.BucketNs / 1e6;
        var startMs = chart.StartOffsetNs / 1e6;
        var bars = new List<Bar>();
        var bottom = new double[chart.BucketCount];
        for (var k = 0; k < chart.Layers.Count; k++)
        {
            var layer = chart.Layers[k];
            for (var i = 0; i < layer.Threads.Length; i++)
            {
                bars.Add(new Bar
                {
                    Position = startMs + (i + 0.5) * bucketMs,
                    ValueBase = bottom[i],
                    Value = bottom[i] + layer.Threads[i],
                    Size = bucketMs * 0.9,
                    FillColor = colors[k % colors.Length],
                    LineWidth = 0,
                });
                bottom[i] += layer.Threads[i];
            }
        }
        plot.Add.Bars(bars);
        plot.Legend.ManualItems.AddRange(chart.Layers.Select((l, k) =>
            new LegendItem { LabelText = l.State, FillColor = colors[k % colors.Length] }));
        plot.ShowLegend(Alignment.UpperRight);
        plot.XLabel("time from the region's begin (ms)");
        plot.YLabel($"threads (of the {chart.Tids.Count} shown)");
        plot.Axes.Margins(bottom: 0);
        if (chart.Omitted > 0) Footnote(plot, $"{chart.Omitted} less busy threads not shown");
        return plot;
    }

    /// <summary>The label with its thread name cut to <paramref name="name"/> characters; the "(tid)" is
    /// kept.</summary>
    private static string Short(string label, int name)
    {
        var at = label.LastIndexOf(" (", StringComparison.Ordinal);
        var (head, tail) = at < 0 ? (label, "") : (label[..at], label[at..]);
        return (head.Length > name ? head[..(name - 1)] + "…" : head) + tail;
    }

    private static void Footnote(Plot plot, string text)
    {
        var t = plot.Add.Annotation(text, Alignment.LowerLeft);
        t.LabelFontSize = 11;
        t.LabelBackgroundColor = Colors.White.WithAlpha(0.8);
        t.LabelBorderColor = Colors.Transparent;
    }
}
