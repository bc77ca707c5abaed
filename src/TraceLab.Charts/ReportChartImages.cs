using TraceLab.Reporting.Charts;

namespace TraceLab.Charts;

/// <summary>Renders a report's charts (those with data), in the order report.html shows them.</summary>
public static class ReportChartImages
{
    public static IReadOnlyList<ChartImage> Render(ReportCharts charts)
    {
        var images = new List<ChartImage>();
        if (charts.States is { } states)
            images.Add(ChartImage.Render(states.Name, states.Title, ReportChartPlots.States(states)));
        if (charts.ReadyLatency is { } latency)
            images.Add(ChartImage.Render(latency.Name, latency.Title, ReportChartPlots.Histogram(latency)));
        if (charts.HandoffGaps is { } gaps)
            images.Add(ChartImage.Render(gaps.Name, gaps.Title, ReportChartPlots.Histogram(gaps)));
        if (charts.Wakers is { } wakers)
            images.Add(ChartImage.Render(wakers.Name, wakers.Title, ReportChartPlots.Heatmap(wakers), height: 520));
        return images;
    }
}
