using System.Buffers.Binary;
using System.Xml.Linq;
using TraceLab.Analyzers.Timeline;
using TraceLab.Charts;
using TraceLab.Reporting.Charts;
using TraceLab.Tests.Html;

namespace TraceLab.Tests.Charts;

/// <summary>The report's charts rendered for real by ScottPlot and SkiaSharp's native library.</summary>
public sealed class ChartRenderingTests
{
    [ChartsFact]
    public void Every_chart_of_the_sample_renders_as_png_and_svg_at_its_size()
    {
        var (report, _) = HtmlReportTests.Analyze(TimelineWindow.Default);
        var images = ReportChartImages.Render(report.Charts);
        Assert.Equal(["chart-thread-states", "chart-ready-latency", "chart-handoff-gaps", "chart-wakers"],
            images.Select(i => i.Name));
        foreach (var image in images)
        {
            // PNG: signature, then IHDR with the width and height (big-endian).
            Assert.Equal([0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A], image.Png[..8]);
            Assert.Equal("IHDR", System.Text.Encoding.ASCII.GetString(image.Png, 12, 4));
            Assert.Equal(image.Width, BinaryPrimitives.ReadInt32BigEndian(image.Png.AsSpan(16)));
            Assert.Equal(image.Height, BinaryPrimitives.ReadInt32BigEndian(image.Png.AsSpan(20)));
            Assert.InRange(image.Png.Length, 10_000, 300_000);
            // SVG: well-formed, the same size, with drawn shapes and the title as text.
            var svg = XDocument.Parse(image.Svg).Root!;
            Assert.Equal("svg", svg.Name.LocalName);
            Assert.Equal(image.Width.ToString(), (string?)svg.Attribute("width"));
            Assert.Equal(image.Height.ToString(), (string?)svg.Attribute("height"));
            Assert.True(svg.Descendants().Count(e => e.Name.LocalName == "path") > 10, $"{image.Name}: few shapes");
            var text = string.Concat(svg.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value));
            Assert.Contains(image.Title.Split(' ')[0], text);
        }
    }

    /// <summary>
    /// Our PNG is encoded with cheaper settings than the drawing library's own
    /// (<see cref="ChartImage.EncodePng(ScottPlot.Plot, int, int)"/>): the pixels must be exactly the library's, for
    /// every chart of a report.
    /// </summary>
    [ChartsFact]
    public void The_fast_png_has_exactly_the_drawing_librarys_pixels()
    {
        var (report, _) = HtmlReportTests.Analyze(TimelineWindow.Default);
        var charts = report.Charts;
        var plots = new List<ScottPlot.Plot>();
        if (charts.States is { } states) plots.Add(ReportChartPlots.States(states));
        if (charts.ReadyLatency is { } latency) plots.Add(ReportChartPlots.Histogram(latency));
        if (charts.HandoffGaps is { } gaps) plots.Add(ReportChartPlots.Histogram(gaps));
        Assert.NotEmpty(plots);
        foreach (var plot in plots)
        {
            using var theirs = SkiaSharp.SKBitmap.Decode(
                plot.GetImageBytes(900, 420, ScottPlot.ImageFormat.Png));
            using var ours = SkiaSharp.SKBitmap.Decode(ChartImage.EncodePng(plot, 900, 420));
            Assert.Equal((theirs.Width, theirs.Height), (ours.Width, ours.Height));
            var differing = 0;
            for (var y = 0; y < ours.Height; y++)
                for (var x = 0; x < ours.Width; x++)
                    if (ours.GetPixel(x, y) != theirs.GetPixel(x, y)) differing++;
            Assert.Equal(0, differing);
        }
    }

    /// <summary>
    /// An opaque canvas goes into the PNG as straight alpha without the encoder's conversion
    /// (<see cref="ChartImage.EncodePng(ScottPlot.Plot, int, int)"/>): the file must be the very bytes the conversion
    /// gives, for every chart of a report; a canvas with a see-through pixel must still be converted.
    /// </summary>
    [ChartsFact]
    public void An_opaque_chart_is_the_same_png_without_the_alpha_conversion()
    {
        var (report, _) = HtmlReportTests.Analyze(TimelineWindow.Default);
        var charts = report.Charts;
        var plots = new List<Func<ScottPlot.Plot>>();
        if (charts.States is { } states) plots.Add(() => ReportChartPlots.States(states));
        if (charts.ReadyLatency is { } latency) plots.Add(() => ReportChartPlots.Histogram(latency));
        if (charts.HandoffGaps is { } gaps) plots.Add(() => ReportChartPlots.Histogram(gaps));
        Assert.NotEmpty(plots);
        foreach (var plot in plots)
        {
            var png = ChartImage.EncodePng(plot(), 900, 420);
            Assert.Equal(ChartImage.EncodePng(plot(), 900, 420, straightWhenOpaque: false), png);
            // Every pixel opaque: the canvas took the path without the conversion.
            using var decoded = SkiaSharp.SKBitmap.Decode(png);
            Assert.True(ChartImage.IsOpaque(decoded.GetPixelSpan()), "a report chart with a see-through pixel");
        }

        // A see-through background: the pixels decoded keep their alpha (premultiplied bytes written as straight ones
        // would darken them), and the file is the converted one.
        ScottPlot.Plot SeeThrough()
        {
            var p = ReportChartPlots.Histogram(charts.ReadyLatency ?? charts.HandoffGaps!);
            p.FigureBackground.Color = ScottPlot.Colors.Transparent;
            p.DataBackground.Color = ScottPlot.Colors.Transparent;
            return p;
        }
        var seeThrough = ChartImage.EncodePng(SeeThrough(), 300, 200);
        Assert.Equal(ChartImage.EncodePng(SeeThrough(), 300, 200, straightWhenOpaque: false), seeThrough);
        using var bitmap = SkiaSharp.SKBitmap.Decode(seeThrough);
        Assert.Equal(0, bitmap.GetPixel(1, 1).Alpha);
    }

    [Fact]
    public void Opaque_means_every_pixels_alpha_is_255()
    {
        var pixels = new byte[4 * 1000];
        for (var i = 3; i < pixels.Length; i += 4) pixels[i] = 255;
        Assert.True(ChartImage.IsOpaque(pixels));
        // The last pixel (past every whole vector) and one inside the vectors: each alone makes it not opaque.
        foreach (var at in new[] { pixels.Length - 1, 4 * 37 + 3 })
        {
            pixels[at] = 254;
            Assert.False(ChartImage.IsOpaque(pixels));
            pixels[at] = 255;
        }
        // Colour bytes never count.
        pixels[0] = pixels[1] = pixels[2] = 0;
        Assert.True(ChartImage.IsOpaque(pixels));
    }

    [ChartsFact]
    public void A_png_is_not_blank()
    {
        var (report, _) = HtmlReportTests.Analyze(TimelineWindow.Default);
        var image = ReportChartImages.Render(report.Charts)[0];
        using var bitmap = SkiaSharp.SKBitmap.Decode(image.Png);
        var colours = new HashSet<uint>();
        for (var y = 0; y < bitmap.Height; y += 7)
            for (var x = 0; x < bitmap.Width; x += 7)
                colours.Add((uint)bitmap.GetPixel(x, y));
        // White background, grid, text, three state colours: far more than a blank or single-colour image.
        Assert.True(colours.Count > 8, $"{colours.Count} colours");
    }

    [ChartsFact]
    public void Each_heatmap_cell_is_drawn_where_its_labels_say_in_its_counts_colour()
    {
        // 5 × 4 distinct counts: a cell drawn one place off, or stretched, shows another cell's colour.
        var cells = Enumerable.Range(0, 5)
            .Select(r => Enumerable.Range(0, 4).Select(c => (long)(1 << (r * 4 + c) % 13)).ToArray()).ToArray();
        var chart = new HeatmapChart("w", "t", Enumerable.Range(0, 5).Select(i => $"a ({i})").ToList(),
            Enumerable.Range(0, 4).Select(i => $"b ({i})").ToList(), cells, 0);
        var plot = ReportChartPlots.Heatmap(chart);
        using var bitmap = SkiaSharp.SKBitmap.Decode(ChartImage.EncodePng(plot, 700, 500));
        var hm = plot.GetPlottables<ScottPlot.Plottables.Heatmap>().Single();
        var range = hm.GetRange();
        for (var r = 0; r < 5; r++)
            for (var c = 0; c < 4; c++)
            {
                // Off the cell's centre, where its count is written; row 0 is the top row, as the y labels say.
                var px = plot.GetPixel(new ScottPlot.Coordinates(c + 0.3, 5 - 1 - r + 0.3));
                var drawn = bitmap.GetPixel((int)px.X, (int)px.Y);
                var want = hm.Colormap.GetColor((Math.Log10(1 + cells[r][c]) - range.Min) / (range.Max - range.Min));
                var distance = Math.Abs(drawn.Red - want.R) + Math.Abs(drawn.Green - want.G)
                    + Math.Abs(drawn.Blue - want.B);
                Assert.True(distance < 24,
                    $"cell {r},{c}: drawn {drawn}, expected {want}");
            }
    }
}
