using TraceLab.Reporting.Charts;

namespace TraceLab.Charts;

/// <summary>Renders a report's charts (those with data), in the order report.html shows them.</summary>
public static class ReportChartImages
{
    public static IReadOnlyList<ChartImage> Render(ReportCharts charts)
    {
        var jobs = new List<Func<ChartImage>>();
        if (charts.States is { } states)
            jobs.Add(() => ChartImage.Render(states.Name, states.Title, ReportChartPlots.States(states)));
        if (charts.ReadyLatency is { } latency)
            jobs.Add(() => ChartImage.Render(latency.Name, latency.Title, ReportChartPlots.Histogram(latency)));
        if (charts.HandoffGaps is { } gaps)
            jobs.Add(() => ChartImage.Render(gaps.Name, gaps.Title, ReportChartPlots.Histogram(gaps)));
        if (charts.Wakers is { } wakers)
            jobs.Add(() => ChartImage.Render(wakers.Name, wakers.Title, ReportChartPlots.Heatmap(wakers), height: 520));
        // Each chart is its own plot and canvas: they render side by side once the analysis has freed the CPUs.
        var images = new ChartImage[jobs.Count];
        Parallel.For(0, jobs.Count, i => images[i] = jobs[i]());
        return images;
    }

    /// <summary>
    /// Loads the drawing library and compiles the drawing code on a background thread (a tiny chart, thrown away),
    /// so that the report's charts, drawn when the analysis ends, do not wait for it. Errors are left for the real
    /// drawing to report.
    /// </summary>
    public static void WarmUp() => Task.Run(() =>
    {
        try
        {
            var plot = new ScottPlot.Plot();
            plot.Add.Bars([1.0, 2.0]);
            plot.Add.Heatmap(new double[,] { { 1, 2 } });
            plot.Title("warm-up");
            ChartImage.EncodePng(plot, 64, 48);
            plot.GetSvgXml(64, 48);
        }
        catch (Exception ex) when (ChartLibrary.IsUnavailable(ex))
        {
            // The report's own drawing meets the same error and says why.
        }
    });
}
