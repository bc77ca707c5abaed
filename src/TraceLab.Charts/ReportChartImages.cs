using System.Collections.Concurrent;
using ScottPlot;
using TraceLab.Reporting.Charts;

namespace TraceLab.Charts;

/// <summary>Renders a report's charts (those with data), in the order report.html shows them.</summary>
public static class ReportChartImages
{
    public static IReadOnlyList<ChartImage> Render(ReportCharts charts)
    {
        var charted = new List<(string Name, string Title, Func<Plot> Plot, int Height)>();
        if (charts.States is { } states)
            charted.Add((states.Name, states.Title, () => ReportChartPlots.States(states), ChartStyle.Height));
        if (charts.ReadyLatency is { } latency)
            charted.Add((latency.Name, latency.Title, () => ReportChartPlots.Histogram(latency), ChartStyle.Height));
        if (charts.HandoffGaps is { } gaps)
            charted.Add((gaps.Name, gaps.Title, () => ReportChartPlots.Histogram(gaps), ChartStyle.Height));
        if (charts.Wakers is { } wakers)
            charted.Add((wakers.Name, wakers.Title, () => ReportChartPlots.Heatmap(wakers), 520));
        // Each chart is drawn from a plot of its own, side by side once the analysis has freed the CPUs: its PNG, then
        // its SVG from the same plot (ChartImage.Encode: the SVG would otherwise draw the plot as a raster once more).
        // The longest-built first (the who-woke-whom heatmap, with the most labels: the SVG canvas maps every text
        // run's glyphs back to characters by walking the font's character map), so that it does not finish alone
        // (docs/performance.md, "busy-aot"); each text's typeface maps few characters where it can
        // (ReducedCmapLabels), which makes that walk short ("svg-text").
        var pngs = new byte[charted.Count][];
        var svgs = new string[charted.Count];
        var order = Enumerable.Range(0, charted.Count).Reverse().ToList();
        Parallel.ForEach(Partitioner.Create(order, EnumerablePartitionerOptions.NoBuffering), index =>
        {
            var (_, _, build, height) = charted[index];
            var plot = build();
            ReducedCmapLabels.Apply(plot);
            (pngs[index], svgs[index]) = ChartImage.Encode(plot, ChartStyle.Width, height);
        });
        return [.. charted.Select((c, i) => new ChartImage(c.Name, c.Title, pngs[i], svgs[i], ChartStyle.Width,
            c.Height))];
    }

    /// <summary>
    /// Loads the drawing library and compiles the drawing code (a tiny chart, thrown away), so that the report's
    /// charts, drawn when the analysis ends, do not wait for it; run it on a background thread. Errors are left for
    /// the real drawing to report. <paramref name="stop"/> ends it at its next step: a process that is ending
    /// waits for the step it is in (native code must not run while the process exits), not for the whole warm-up.
    /// </summary>
    public static void WarmUp(CancellationToken stop)
    {
        try
        {
            if (stop.IsCancellationRequested) return;
            var plot = new Plot();
            plot.Add.Bars([1.0, 2.0]);
            plot.Add.Heatmap(new double[,] { { 1, 2 } });
            plot.Title("warm-up");
            if (stop.IsCancellationRequested) return;
            // Also builds the reduced-map typefaces (regular for the labels, bold for the title).
            ReducedCmapLabels.Apply(plot);
            if (stop.IsCancellationRequested) return;
            ChartImage.Encode(plot, 64, 48);
        }
        catch (Exception ex) when (ChartLibrary.IsUnavailable(ex))
        {
            // The report's own drawing meets the same error and says why.
        }
    }
}
