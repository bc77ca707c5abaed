using System.Buffers.Binary;
using ScottPlot;
using SkiaSharp;
using TraceLab.Analyzers.Timeline;
using TraceLab.Charts;
using TraceLab.Reporting.Charts;
using TraceLab.Tests.Html;

namespace TraceLab.Tests.Charts;

/// <summary>
/// Chart texts drawn with a typeface whose character map keeps only the characters charts use
/// (<see cref="ReducedCmapLabels"/>): the same PNG and SVG bytes as with the original typeface.
/// </summary>
public sealed class ReducedCmapTests
{
    private static SKTypeface DefaultTypeface(bool bold = false) => Fonts.GetTypeface(Fonts.Default, bold, false);

    /// <summary>A builder per chart of the sample report, by the chart's file stem.</summary>
    private static Dictionary<string, Func<Plot>> SampleCharts(ReportCharts charts)
    {
        var builders = new Dictionary<string, Func<Plot>>();
        if (charts.States is { } s) builders[s.Name] = () => ReportChartPlots.States(s);
        if (charts.ReadyLatency is { } r) builders[r.Name] = () => ReportChartPlots.Histogram(r);
        if (charts.HandoffGaps is { } h) builders[h.Name] = () => ReportChartPlots.Histogram(h);
        if (charts.Wakers is { } w) builders[w.Name] = () => ReportChartPlots.Heatmap(w);
        return builders;
    }

    private static void AssertSameBytes(Func<Plot> build, int height)
    {
        var reduced = build();
        ReducedCmapLabels.Apply(reduced);
        // Only where the drawing library renders with FreeType (ReducedCmapTypefaces.Of); elsewhere nothing changes.
        Assert.Same(ReducedCmapTypefaces.Of(DefaultTypeface(bold: true))?.Typeface, reduced.Axes.Title.Label.Font);
        Assert.Equal(OperatingSystem.IsLinux(), reduced.Axes.Title.Label.Font is not null);
        Assert.Equal(ChartImage.EncodeSvg(build(), 900, height), ChartImage.EncodeSvg(reduced, 900, height));
        var again = build();
        ReducedCmapLabels.Apply(again);
        Assert.Equal(ChartImage.EncodePng(build(), 900, height), ChartImage.EncodePng(again, 900, height));
    }

    [ChartsFact]
    public void Every_sample_chart_gives_the_same_png_and_svg_bytes_with_the_reduced_map()
    {
        var charts = HtmlReportTests.Analyze(TimelineWindow.Default).Report.Charts;
        var builders = SampleCharts(charts);
        Assert.Equal(4, builders.Count);
        foreach (var build in builders.Values) AssertSameBytes(build, 520);
        // The report's own drawing (several threads, the reduced map applied) against each chart drawn without it.
        foreach (var image in ReportChartImages.Render(charts))
        {
            var build = builders[image.Name];
            Assert.Equal(ChartImage.EncodeSvg(build(), image.Width, image.Height), image.Svg);
            Assert.Equal(ChartImage.EncodePng(build(), image.Width, image.Height), image.Png);
        }
    }

    [ChartsFact]
    public void A_thread_name_outside_the_reduced_map_keeps_the_original_typeface_and_the_same_bytes()
    {
        var wakers = HtmlReportTests.Analyze(TimelineWindow.Default).Report.Charts.Wakers!;
        var named = wakers with { Wakees = [.. wakers.Wakees.Select((w, i) => i == 0 ? "线程🙂 (4242)" : w)] };
        var plot = ReportChartPlots.Heatmap(named);
        ReducedCmapLabels.Apply(plot);
        Assert.Null(plot.Axes.Left.TickLabelStyle.Font);
        Assert.Equal(OperatingSystem.IsLinux(), plot.Axes.Bottom.TickLabelStyle.Font is not null);
        AssertSameBytes(() => ReportChartPlots.Heatmap(named), 520);
    }

    [ChartsFact]
    public void The_reduced_typeface_maps_the_wanted_characters_to_the_original_glyphs_and_nothing_else()
    {
        var original = DefaultTypeface();
        var reduced = ReducedCmapTypefaces.Of(original);
        if (!OperatingSystem.IsLinux())
        {
            Assert.Null(reduced);
            return;
        }
        Assert.NotNull(reduced);
        Assert.Equal(original.FamilyName, reduced.Typeface.FamilyName);
        using SKFont before = new(original), after = new(reduced.Typeface);
        var text = "Ready latency (µs) 12 × 3 – 4…";
        Assert.Equal(before.GetGlyphs(text), after.GetGlyphs(text));
        Assert.True(reduced.Draws(text + "\n"));
        // A letter the font has (Cyrillic in DejaVu Sans) is not in the reduced map.
        var other = "ЖΩאあ".FirstOrDefault(c => before.GetGlyphs(c.ToString())[0] != 0);
        Assert.NotEqual('\0', other);
        Assert.Equal(0, after.GetGlyphs(other.ToString())[0]);
        Assert.False(reduced.Draws(other.ToString()));
        Assert.False(reduced.Draws("🙂"));
    }

    [ChartsFact]
    public void The_reduced_typeface_is_built_once_when_many_threads_ask_at_once()
    {
        var original = DefaultTypeface();
        var seen = new ReducedCmapTypeface?[16];
        Parallel.For(0, seen.Length, i => seen[i] = ReducedCmapTypefaces.Of(original));
        Assert.All(seen, r => Assert.Same(seen[0], r));
    }

    [ChartsFact]
    public void Truncated_or_corrupted_font_files_give_null_or_a_font_never_an_exception()
    {
        var font = FontBytes(DefaultTypeface());
        var cmap = Format4Cmap.Build([((ushort)'A', (ushort)36)]);
        Assert.NotNull(SfntCmapReplacer.Replace(font, cmap));
        var random = new Random(21);
        for (var length = 0; length < 600; length += 7) SfntCmapReplacer.Replace(font.AsSpan(0, length), cmap);
        for (var round = 0; round < 2000; round++)
        {
            var bad = (byte[])font.Clone();
            // Mostly the header and table directory, where the offsets and lengths are.
            for (var k = 0; k < 4; k++) bad[random.Next(round % 2 == 0 ? 400 : bad.Length)] = (byte)random.Next(256);
            var rewritten = SfntCmapReplacer.Replace(bad, cmap);
            if (rewritten is not null) Assert.Equal(0, rewritten.Length % 4);
        }
    }

    [Theory]
    [InlineData("ttcf")]
    [InlineData("wOFF")]
    [InlineData("wOF2")]
    public void Collections_and_web_fonts_are_not_rewritten(string tag)
    {
        var file = new byte[64];
        System.Text.Encoding.ASCII.GetBytes(tag).CopyTo(file, 0);
        BinaryPrimitives.WriteUInt16BigEndian(file.AsSpan(4), 1);
        Assert.Null(SfntCmapReplacer.Replace(file, new byte[16]));
    }

    [ChartsFact]
    public void The_rewritten_file_has_valid_table_checksums_and_the_head_adjustment()
    {
        var rewritten = SfntCmapReplacer.Replace(FontBytes(DefaultTypeface()), Format4Cmap.Build([((ushort)'A', 36)]))!;
        int count = BinaryPrimitives.ReadUInt16BigEndian(rewritten.AsSpan(4));
        for (var i = 0; i < count; i++)
        {
            var record = rewritten.AsSpan(12 + 16 * i);
            var offset = (int)BinaryPrimitives.ReadUInt32BigEndian(record[8..]);
            var length = (int)BinaryPrimitives.ReadUInt32BigEndian(record[12..]);
            Assert.Equal(0, offset % 4);
            var table = rewritten.AsSpan(offset, (length + 3) & ~3).ToArray();
            if (BinaryPrimitives.ReadUInt32BigEndian(record) == 0x68656164) table.AsSpan(8, 4).Clear();
            Assert.Equal(BinaryPrimitives.ReadUInt32BigEndian(record[4..]), Sum(table));
        }
        Assert.Equal(0xB1B0AFBA, Sum(rewritten));
    }

    private static uint Sum(byte[] data)
    {
        uint sum = 0;
        for (var i = 0; i + 4 <= data.Length; i += 4)
            sum = unchecked(sum + BinaryPrimitives.ReadUInt32BigEndian(data.AsSpan(i)));
        return sum;
    }

    private static byte[] FontBytes(SKTypeface typeface)
    {
        using var stream = typeface.OpenStream(out _);
        using var data = SKData.Create(stream);
        return data.ToArray();
    }
}
