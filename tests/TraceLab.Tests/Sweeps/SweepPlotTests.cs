using System.Globalization;
using System.Xml.Linq;
using TraceLab.Charts;
using TraceLab.Reporting.Charts;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Plots;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Tests.Sweeps;

public sealed class SweepPlotTests
{
    private static readonly XNamespace Svg = "http://www.w3.org/2000/svg";

    private static SyntheticSweep ThreeSeries()
    {
        var s = new SyntheticSweep();
        foreach (var series in new[] { "cs", "cs-nested", "mutex" })
            foreach (var x in new[] { "1", "2", "4", "8" })
                s.Add(series, x, 1, 2, 3.5);
        return s;
    }

    [Fact]
    public void Chart_has_one_series_per_variant_and_one_point_per_swept_value_with_the_statistics()
    {
        var chart = SweepPlots.Chart(ThreeSeries().Data(), "elapsed");
        Assert.Equal(["cs", "cs-nested", "mutex"], chart.Series.Select(s => s.Label));
        foreach (var s in chart.Series)
        {
            Assert.Equal(["1", "2", "4", "8"], s.Points.Select(p => p.XLabel));
            // Seconds below 1 are drawn in ms: the median of 1, 2, 3.5 s stays 2 s (no scaling above 1 s).
            Assert.All(s.Points, p => Assert.Equal((2.0, 1.0, 3.5), (p.Median, p.Min, p.Max)));
        }
        Assert.Contains("elapsed time (s) vs threads", chart.Title);
    }

    [Fact]
    public void Plot_draws_each_series_median_line_and_its_min_max_band()
    {
        var s = new SyntheticSweep().Add("cs", "1", 1, 2, 3.5).Add("cs", "2", 2, 4, 5).Add("mutex", "1", 1, 1, 1)
            .Add("mutex", "2", 1.5, 2, 2.5);
        var chart = SweepPlots.Chart(s.Data(), "elapsed");
        var plot = LineChartPlot.Build(chart);
        var lines = plot.GetPlottables<ScottPlot.Plottables.Scatter>().ToList();
        Assert.Equal(["cs", "mutex"], lines.Select(l => l.LegendText));
        Assert.Equal([2.0, 4.0], lines[0].Data.GetScatterPoints().Select(p => p.Y));
        Assert.Equal([1.0, 2.0], lines[1].Data.GetScatterPoints().Select(p => p.Y));
        var bands = plot.GetPlottables<ScottPlot.Plottables.FillY>().ToList();
        Assert.Equal(2, bands.Count);
        // The band's outline: the max line out, the min line back (polygon), so its y range is min..max.
        var cs = bands[0].GetAxisLimits();
        Assert.Equal((1.0, 5.0), (cs.Bottom, cs.Top));
    }

    [Fact]
    public void A_flat_claim_draws_its_ceiling_over_the_x_values_it_covers()
    {
        var s = new SyntheticSweep().Add("all", "2", 1, 1, 1).Add("all", "4", 1.1, 1.1, 1.1)
            .Add("all", "8", 1.2, 1.2, 1.2).Add("all", "1", 3, 3, 3);
        s.Rules.Add(new FlatRule("TH1", "flat beyond 2M", "elapsed", (x, _) => x != "1", "x ≥ 2", tolerance: 0.25));
        var chart = SweepPlots.Chart(s.Data(), "elapsed");
        var e = Assert.Single(chart.Expected);
        Assert.StartsWith("TH1: flat", e.Label);
        Assert.Equal([2.0, 4, 8], e.Points.Select(p => p.X).Order());
        Assert.All(e.Points, p => Assert.Equal(1.25, p.Y, 9));
        var dashed = LineChartPlot.Build(chart).GetPlottables<ScottPlot.Plottables.Scatter>()
            .Single(p => p.LegendText == e.Label);
        Assert.Equal(ScottPlot.LinePattern.Dashed, dashed.LinePattern);
    }

    [Fact]
    public void A_growth_claim_draws_the_constant_per_thread_cost_of_each_side()
    {
        var s = new SyntheticSweep();
        foreach (var x in new[] { 1, 2, 4, 8 })
        {
            s.Add("cs", x.ToString(CultureInfo.InvariantCulture), x * x, x * x, x * x);
            s.Add("mutex", x.ToString(CultureInfo.InvariantCulture), x, x, x);
        }
        s.Rules.Add(new GrowthRule("TM4", "cs degrades", "elapsed", "cs", "mutex", ["1", "2"], ["8"]));
        var chart = SweepPlots.Chart(s.Data(), "elapsed");
        Assert.Equal(2, chart.Expected.Count);
        // cs: mean of 1/1 and 4/2 = 1.5 per thread; mutex: 1 per thread.
        var cs = chart.Expected.Single(e => e.Series == "cs");
        Assert.Equal([1.5, 3, 6, 12], cs.Points.OrderBy(p => p.X).Select(p => p.Y));
        var mutex = chart.Expected.Single(e => e.Series == "mutex");
        Assert.Equal([1.0, 2, 4, 8], mutex.Points.OrderBy(p => p.X).Select(p => p.Y));
    }

    [ChartsFact]
    public void Rendered_svg_is_well_formed_and_names_every_series()
    {
        var (_, _, svg) = SweepPlots.Render(ThreeSeries().Data()).First();
        var doc = XDocument.Parse(svg);
        Assert.Equal("svg", doc.Root!.Name.LocalName);
        var text = string.Concat(doc.Descendants(Svg + "text").Select(t => t.Value));
        foreach (var label in new[] { "cs", "cs-nested", "mutex", "elapsed time (s)" })
            Assert.Contains(label, text);
    }

    [Fact]
    public void Sub_second_times_are_plotted_in_milliseconds()
    {
        var s = new SyntheticSweep().Add("cs", "1", 0.001, 0.002, 0.003).Add("cs", "2", 0.002, 0.002, 0.002);
        var chart = SweepPlots.Chart(s.Data(), "elapsed");
        Assert.Equal("elapsed time (ms)", chart.YLabel);
        Assert.Equal(2, chart.Series[0].Points[0].Median, 9);
    }

    [Fact]
    public void Series_orders_of_magnitude_apart_get_a_log_axis_with_one_two_five_ticks()
    {
        var s = new SyntheticSweep().Add("cs", "1", 0.001, 0.001, 0.001).Add("mutex", "1", 1, 1, 1);
        var chart = SweepPlots.Chart(s.Data(), "elapsed");
        Assert.True(chart.LogY);
        Assert.Equal([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], NiceScale.LogTicks(1, 1000));
        Assert.Equal([0.0005, 0.001, 0.002], NiceScale.LogTicks(0.0008, 0.0015));
    }

    [Theory]
    [InlineData(0, 1.07, new[] { 0, 0.2, 0.4, 0.6, 0.8, 1, 1.2 })]
    [InlineData(0, 22, new[] { 0, 5.0, 10, 15, 20, 25 })]
    [InlineData(0, 0.0031, new[] { 0, 0.0005, 0.001, 0.0015, 0.002, 0.0025, 0.003, 0.0035 })]
    public void Linear_ticks_are_nice_numbers_covering_the_range(double min, double max, double[] expected)
    {
        Assert.Equal(expected, NiceScale.Ticks(min, max, 7));
    }

    [Fact]
    public void Special_x_value_on_a_log_axis_goes_past_the_largest_with_its_name()
    {
        var def = new SweepDefinition
        {
            Name = "th",
            Workload = "throttle",
            Title = "t",
            XParameter = "active",
            XValues = ["1", "64", "0"],
            LogX =
                true,
            XNames = new Dictionary<string, string> { ["0"] = "none" },
        };
        var s = new SyntheticSweep("active").Add("all", "1", 1, 1, 1).Add("all", "64", 2, 2, 2)
            .Add("all", "0", 3, 3, 3);
        var data = new SweepData(def, s.Data().Points, s.Data().Runs, 3);
        var chart = SweepPlots.Chart(data, "elapsed");
        var none = chart.Series[0].Points.Single(p => p.XLabel == "none");
        Assert.Equal(128, none.X);
        Assert.True(chart.LogX);
    }
}
