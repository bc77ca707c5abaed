using ScottPlot;
using SkiaSharp;

namespace TraceLab.Charts;

/// <summary>A rendered chart: the file stem, its caption, and the same picture as PNG and as SVG.</summary>
public sealed record ChartImage(string Name, string Title, byte[] Png, string Svg, int Width, int Height)
{
    /// <summary>The plot as SVG, its clip-path ids numbered from 0 (<see cref="SvgClipIds"/>).</summary>
    public static string EncodeSvg(Plot plot, int width, int height) =>
        SvgClipIds.Renumber(plot.GetSvgXml(width, height));

    /// <summary>
    /// The plot as PNG: the same pixels as the drawing library's own PNG, encoded with the "up" row filter and zlib
    /// level 3. The library tries every filter on every row at level 6, which made PNG encoding the largest part of
    /// drawing a report's charts — a third of the time after the pass of a Native AOT `analyze` (busy perf.data: 20
    /// → 7 ms for the who-woke-whom chart, the file 6 % larger; docs/performance.md, "busy-aot").
    /// </summary>
    public static byte[] EncodePng(Plot plot, int width, int height)
    {
        using var surface = SKSurface.Create(new SKImageInfo(width, height, SKColorType.Rgba8888, SKAlphaType.Premul));
        plot.Render(surface.Canvas, width, height);
        using var pixels = surface.PeekPixels();
        using var data = pixels.Encode(new SKPngEncoderOptions(SKPngEncoderFilterFlags.Up, zLibLevel: 3))
            ?? throw new InvalidOperationException($"the drawing library did not encode a {width}x{height} PNG");
        return data.ToArray();
    }
}
