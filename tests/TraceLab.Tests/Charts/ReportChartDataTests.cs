using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Charts;
using TraceLab.Core;
using TraceLab.Reporting;
using TraceLab.Reporting.Charts;
using TraceLab.Tests.Html;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Charts;

/// <summary>
/// Every chart's numbers, recomputed from something else than what the chart was built from: the histograms from the
/// thread timeline's own segments and handoffs (the whole trace recorded), the heatmap from report.json's wakeup
/// counts, the state bars from the timeline summary; and what ScottPlot is given to draw, against the chart model.
/// </summary>
public sealed class ReportChartDataTests
{
    private static readonly Lazy<(RunReport Report, TimelineData Timeline)> Whole =
        new(() => HtmlReportTests.Analyze(TimelineWindow.Everything));

    private static readonly Lazy<(RunReport Report, TimelineData Timeline)> Window =
        new(() => HtmlReportTests.Analyze(TimelineWindow.Default));

    /// <summary>Power-of-two bins counted by hand: [0, 2), [2, 4), [4, 8), …</summary>
    private static Dictionary<long, long> Bin(IEnumerable<long> values)
    {
        var bins = new Dictionary<long, long>();
        foreach (var v in values)
        {
            long low = 2;
            while (low * 2 <= v) low *= 2;
            var key = v < 2 ? 0 : low;
            bins[key] = bins.GetValueOrDefault(key) + 1;
        }
        return bins;
    }

    private static Dictionary<long, long> NonEmpty(HistogramSeries s) =>
        s.Bins.Where(b => b.Count > 0).ToDictionary(b => b.LowNs, b => b.Count);

    [Fact]
    public void Log_bins_of_a_histogram_are_the_values_counted_per_power_of_two()
    {
        long[] values = [0, 1, 2, 3, 4, 63, 64, 100, 1000, 1023, 1024, 4096, 5_000_000, 5_000_001, 1L << 40];
        var h = new LatencyHistogram();
        foreach (var v in values) h.Add(v);
        var bins = LogBins.From(h);
        Assert.Equal(Bin(values), bins.Where(b => b.Count > 0).ToDictionary(b => b.LowNs, b => b.Count));
        // Contiguous from the lowest to the highest, each [low, 2 × low).
        Assert.All(bins.Skip(1), b => Assert.Equal(2 * b.LowNs, b.HighNs));
        Assert.Equal(41, bins.Count);
        Assert.Equal(values.Length, bins.Sum(b => b.Count));
    }

    [Fact]
    public void Ready_latency_bins_equal_the_timelines_runnable_to_running_segments()
    {
        var (report, timeline) = Whole.Value;
        Assert.False(timeline.Truncated);
        var chart = report.Charts.ReadyLatency!;
        Assert.Equal(Math.Min(ReportChartsBuilder.LatencyThreads, report.Threads.Count(t => t.ReadyLatency.Count > 0)),
            chart.Series.Count);
        var byLabel = report.Threads.ToDictionary(t => $"{t.Name} ({t.Tid})");
        foreach (var series in chart.Series)
        {
            var tid = byLabel[series.Label].Tid;
            var segments = timeline.Segments.Where(s => s.Tid == tid).ToList();
            var latencies = segments.Zip(segments.Skip(1))
                .Where(p => p.First.State == ThreadRunState.Runnable && p.Second.State == ThreadRunState.Running
                    && p.Second.Start == p.First.End
                    && p.First.End >= report.Region.BeginNs && p.First.End <= report.Region.EndNs)
                .Select(p => p.First.End - p.First.Start).ToList();
            // The histogram leaves out switch-ins the trace did not log (their start is a repair estimate); the
            // timeline draws them: each bin may differ by those only, and only upwards on the timeline's side.
            var want = Bin(latencies);
            var got = NonEmpty(series);
            var extra = 0L;
            foreach (var (low, count) in want)
            {
                var plotted = got.GetValueOrDefault(low);
                Assert.InRange(plotted, 0, count);
                extra += count - plotted;
            }
            Assert.Empty(got.Keys.Except(want.Keys));
            Assert.InRange(extra, 0, byLabel[series.Label].RepairedStarts);
            if (byLabel[series.Label].RepairedStarts == 0) Assert.Equal(want, got);
            Assert.Equal(byLabel[series.Label].ReadyLatency.Count, series.Total);
        }
        // Ranked by ready time: the first shown thread waited longest for a CPU.
        var shown = chart.Series.Select(s => byLabel[s.Label].ReadyNs).ToList();
        Assert.Equal(shown.OrderDescending(), shown);
    }

    [Fact]
    public void Handoff_gap_bins_equal_the_timelines_handoffs_per_object()
    {
        var (report, timeline) = Whole.Value;
        var chart = report.Charts.HandoffGaps!;
        Assert.NotEmpty(chart.Series);
        foreach (var series in chart.Series)
        {
            var gaps = timeline.Handoffs.Where(h => h.Object.ToString() == series.Label).Select(h => h.GapNs).ToList();
            Assert.Equal(Bin(gaps), NonEmpty(series));
            Assert.Equal(report.Convoys!.Objects.Single(o => o.Object == series.Label).Handoffs, series.Total);
        }
    }

    [Fact]
    public void Heatmap_rows_add_up_to_each_threads_wakeups_and_hold_its_top_wakers()
    {
        var report = Window.Value.Report;
        var chart = report.Charts.Wakers!;
        var byLabel = report.Threads.ToDictionary(t => $"{t.Name} ({t.Tid})");
        for (var r = 0; r < chart.Wakees.Count; r++)
        {
            var thread = byLabel[chart.Wakees[r]];
            Assert.Equal(thread.WakeupsReceived, chart.Cells[r].Sum());
            foreach (var w in thread.TopWakers)
            {
                var label = w.Tid < 0 ? "<irq>" : $"{w.Name} ({w.Tid})";
                var c = chart.Wakers.ToList().IndexOf(label);
                // A top waker outside the shown threads is counted among "other threads".
                if (c >= 0) Assert.Equal(w.Count, chart.Cells[r][c]);
                else Assert.True(chart.Cells[r][chart.Wakers.ToList().IndexOf("other threads")] >= w.Count);
            }
        }
    }

    [Fact]
    public void Heatmap_cells_of_a_hand_built_trace_are_its_wakeups()
    {
        // 10 wakes 20 three times and 30 once; 20 wakes 10 twice; an interrupt wakes 30 once; 40 (not reported)
        // wakes 10.
        (int Waker, int Wakee, bool Irq)[] wakes = [(10, 20, false), (10, 20, false), (10, 20, false), (10, 30, false),
            (20, 10, false), (20, 10, false), (0, 30, true), (40, 10, false)];
        var events = new List<KernelEvent> { KernelEvent.Marker(100, 0, 10, MeasuredRegion.BeginMarker) };
        long t = 1000;
        foreach (var (waker, wakee, irq) in wakes)
            events.Add(KernelEvent.Waking(t += 100, 0, waker, wakee, 1).WithFlags(irq ? EventFlags.HardIrq : (byte)0));
        var acc = Run([.. events]);
        var chart = ReportChartsBuilder.Wakers([10, 20, 30], tid => acc.Threads.GetValueOrDefault(tid),
            tid => $"t{tid}")!;
        // Rows by wakeups received (20: 3, 10: 3, 30: 2; ties by tid), columns the same threads, then others and irq.
        Assert.Equal(["t10", "t20", "t30"], chart.Wakees);
        Assert.Equal(["t10", "t20", "t30", "other threads", "<irq>"], chart.Wakers);
        Assert.Equal([0, 2, 0, 1, 0], chart.Cells[0]);
        Assert.Equal([3, 0, 0, 0, 0], chart.Cells[1]);
        Assert.Equal([1, 0, 0, 0, 1], chart.Cells[2]);
    }

    [Fact]
    public void State_bars_add_up_to_the_timeline_summary_of_the_shown_threads()
    {
        var (report, timeline) = Window.Value;
        var chart = report.Charts.States!;
        Assert.Equal(ReportChartsBuilder.StateBuckets, chart.BucketCount);
        var length = timeline.End - timeline.Start;
        double Ns(string state) => chart.Layers.Single(l => l.State == state).Threads
            .Select((v, i) => v * Math.Min(chart.BucketNs, length - i * chart.BucketNs)).Sum();
        var summaries = chart.Tids.Select(tid => TimelineSummary.For(timeline, tid)).ToList();
        Assert.Equal(summaries.Sum(s => s.RunningNs), Ns("running"), 0);
        Assert.Equal(summaries.Sum(s => s.RunnableNs), Ns("runnable"), 0);
        Assert.Equal(summaries.Sum(s => s.BlockedNs), Ns("blocked"), 0);
        // No bar is taller than the threads shown.
        for (var i = 0; i < chart.BucketCount; i++)
            Assert.True(chart.Layers.Sum(l => l.Threads[i]) <= chart.Tids.Count + 1e-9);
    }

    [Fact]
    public void Histogram_plot_draws_each_bin_as_its_share_of_the_series()
    {
        var chart = Whole.Value.Report.Charts.ReadyLatency!;
        var plot = ReportChartPlots.Histogram(chart);
        var barPlots = plot.GetPlottables<ScottPlot.Plottables.BarPlot>().ToList();
        Assert.Equal(chart.Series.Count, barPlots.Count);
        for (var j = 0; j < chart.Series.Count; j++)
        {
            var s = chart.Series[j];
            var expected = s.Bins.Where(b => b.Count > 0).Select(b => 100.0 * b.Count / s.Total).ToList();
            Assert.Equal(expected, barPlots[j].Bars.Select(b => b.Value).ToList());
            // Each bar sits in its own bin's slot on the log2 axis.
            Assert.Equal(s.Bins.Where(b => b.Count > 0).Select(b => LogBins.IndexOf(b.LowNs)),
                barPlots[j].Bars.Select(b => (int)Math.Round(b.Position)));
        }
    }

    [Fact]
    public void Heatmap_plot_colours_each_cell_by_its_count()
    {
        var chart = Window.Value.Report.Charts.Wakers!;
        var plot = ReportChartPlots.Heatmap(chart);
        var hm = plot.GetPlottables<ScottPlot.Plottables.Heatmap>().Single();
        for (var r = 0; r < chart.Wakees.Count; r++)
            for (var c = 0; c < chart.Wakers.Count; c++)
                Assert.Equal(Math.Log10(1 + chart.Cells[r][c]), hm.Intensities[r, c], 12);
        var labels = plot.GetPlottables<ScottPlot.Plottables.Text>().Select(t => t.LabelText).ToList();
        Assert.Equal(chart.Cells.SelectMany(row => row).Where(v => v > 0).Select(v => v.ToString("N0")), labels);
    }

    [Fact]
    public void State_plot_stacks_the_layers_in_each_bucket()
    {
        var chart = Window.Value.Report.Charts.States!;
        var bars = ReportChartPlots.States(chart).GetPlottables<ScottPlot.Plottables.BarPlot>().Single().Bars;
        Assert.Equal(chart.BucketCount * chart.Layers.Count, bars.Count);
        for (var k = 0; k < chart.Layers.Count; k++)
            for (var i = 0; i < chart.BucketCount; i++)
            {
                var bar = bars[k * chart.BucketCount + i];
                Assert.Equal(chart.Layers.Take(k).Sum(l => l.Threads[i]), bar.ValueBase, 9);
                Assert.Equal(chart.Layers[k].Threads[i], bar.Value - bar.ValueBase, 9);
            }
    }
}
