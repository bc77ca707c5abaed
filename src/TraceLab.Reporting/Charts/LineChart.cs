namespace TraceLab.Reporting.Charts;

public sealed record ChartPoint(double X, string XLabel, double Median, double Min, double Max);

public sealed record ChartSeries(string Label, IReadOnlyList<ChartPoint> Points);

/// <summary>
/// What a claim expects, drawn as a dashed line next to the measurements (e.g. TH1's "flat beyond 2M" ceiling, TM4's
/// constant per-thread cost, TM2's least-squares line), with the claim in its label.
/// </summary>
public sealed record ExpectedLine(string Label, string Series, IReadOnlyList<(double X, double Y)> Points);

/// <summary>
/// A sweep's line chart, as data: one line per series through the medians, a min–max band, the expected shapes,
/// x at the swept values (linear, log or categorical) and a linear or log y axis. Drawn by TraceLab.Charts
/// (<c>LineChartPlot</c>); until ScottPlot was available it was written out as SVG by hand (docs/dependencies.md).
/// </summary>
public sealed class LineChart
{
    public required string Title { get; init; }
    public string? Subtitle { get; init; }
    public required string XLabel { get; init; }
    public required string YLabel { get; init; }
    public bool LogX { get; init; }
    /// <summary>Log-scale y axis: for series that differ by orders of magnitude (cs vs mutex).</summary>
    public bool LogY { get; init; }
    /// <summary>Evenly spaced x positions labelled by <see cref="ChartPoint.XLabel"/> (non-numeric swept
    /// values).</summary>
    public bool Categorical { get; init; }
    public required IReadOnlyList<ChartSeries> Series { get; init; }
    public IReadOnlyList<ExpectedLine> Expected { get; init; } = [];
}
