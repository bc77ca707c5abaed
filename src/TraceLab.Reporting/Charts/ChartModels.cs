namespace TraceLab.Reporting.Charts;

/// <summary>Durations in [<see cref="LowNs"/>, <see cref="HighNs"/>): one power of two (0 falls in the first
/// bin).</summary>
public readonly record struct LogBin(long LowNs, long HighNs, long Count);

/// <summary>One histogram of a chart: a thread's ready latencies, or a lock object's handoff gaps.</summary>
/// <param name="Total">Samples in the histogram (the bins' counts add up to it).</param>
public sealed record HistogramSeries(string Label, IReadOnlyList<LogBin> Bins, long Total);

/// <summary>Histograms over a log2 duration axis, one per shown thread or object (the top few).</summary>
/// <param name="Name">File stem of the chart's PNG and SVG.</param>
/// <param name="Omitted">Threads or objects with samples that the chart leaves out (beyond the top ones).</param>
public sealed record HistogramChart(string Name, string Title, string XLabel, IReadOnlyList<HistogramSeries> Series,
    int Omitted);

/// <summary>
/// Wakeup counts: <see cref="Cells"/>[row][column] is how often <see cref="Wakers"/>[column] woke
/// <see cref="Wakees"/>[row] in the region.
/// </summary>
public sealed record HeatmapChart(string Name, string Title, IReadOnlyList<string> Wakees, IReadOnlyList<string> Wakers,
    long[][] Cells, int Omitted);

/// <summary>One stacked layer: a state's average thread count per bucket (ns in the state ÷ bucket width).</summary>
public sealed record StateLayer(string State, double[] Threads);

/// <summary>
/// Thread states over time: the timeline window cut into <see cref="BucketCount"/> buckets of
/// <see cref="BucketNs"/>, starting <see cref="StartOffsetNs"/> after the region's begin; per bucket one stacked bar
/// of how many of the shown threads were running, runnable and blocked (on average over the bucket).
/// </summary>
public sealed record StateBarsChart(string Name, string Title, long StartOffsetNs, long BucketNs,
    IReadOnlyList<StateLayer> Layers, IReadOnlyList<int> Tids, int Omitted)
{
    public int BucketCount => Layers.Count == 0 ? 0 : Layers[0].Threads.Length;
}

/// <summary>The charts of one report (each null when its analysis did not run or there is nothing to draw).</summary>
public sealed record ReportCharts(HistogramChart? ReadyLatency, HistogramChart? HandoffGaps, HeatmapChart? Wakers,
    StateBarsChart? States)
{
    public static readonly ReportCharts None = new(null, null, null, null);

    public bool IsEmpty => ReadyLatency is null && HandoffGaps is null && Wakers is null && States is null;
}
