using System.Globalization;
using System.Xml.Linq;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Plots;

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
        var data = ThreeSeries().Data();
        var doc = XDocument.Parse(SweepPlots.Chart(data, "elapsed").ToSvg());
        var series = doc.Descendants(Svg + "g").Where(g => (string?)g.Attribute("class") == "series").ToList();
        Assert.Equal(["cs", "cs-nested", "mutex"], series.Select(g => (string)g.Attribute("data-series")!));
        foreach (var g in series)
        {
            var points = g.Elements(Svg + "g").Where(p => (string?)p.Attribute("class") == "point").ToList();
            Assert.Equal(["1", "2", "4", "8"], points.Select(p => (string)p.Attribute("data-x")!));
            // Seconds below 1 are drawn in ms: the median of 1, 2, 3.5 s stays 2 s (no scaling above 1 s).
            Assert.All(points, p =>
            {
                Assert.Equal(2, double.Parse((string)p.Attribute("data-median")!, CultureInfo.InvariantCulture));
                Assert.Equal(1, double.Parse((string)p.Attribute("data-min")!, CultureInfo.InvariantCulture));
                Assert.Equal(3.5, double.Parse((string)p.Attribute("data-max")!, CultureInfo.InvariantCulture));
            });
            Assert.Single(g.Elements(Svg + "polyline"));
        }
        // Legend: one entry per series; the title names the axes.
        Assert.Equal(3, doc.Descendants(Svg + "g").Single(g => (string?)g.Attribute("class") == "legend").Elements(Svg + "text").Count() - 1);
        Assert.Contains("elapsed time (s) vs threads", doc.Root!.Element(Svg + "title")!.Value);
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
            Name = "th", Workload = "throttle", Title = "t", XParameter = "active", XValues = ["1", "64", "0"], LogX = true,
            XNames = new Dictionary<string, string> { ["0"] = "none" },
        };
        var s = new SyntheticSweep("active").Add("all", "1", 1, 1, 1).Add("all", "64", 2, 2, 2).Add("all", "0", 3, 3, 3);
        var data = new SweepData(def, s.Data().Points, s.Data().Runs, 3);
        var chart = SweepPlots.Chart(data, "elapsed");
        var none = chart.Series[0].Points.Single(p => p.XLabel == "none");
        Assert.Equal(128, none.X);
        Assert.True(chart.LogX);
    }
}
