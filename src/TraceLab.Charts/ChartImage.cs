using System.Numerics;
using System.Runtime.InteropServices;
using System.Text;
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
    /// The plot as PNG (<see cref="EncodePng(Plot, int, int)"/>) and as SVG, the same bytes as
    /// <see cref="EncodePng(Plot, int, int)"/> and <see cref="EncodeSvg"/> each on a plot of its own, for one raster
    /// drawing fewer. The drawing library's SVG (<c>Plot.GetSvgXml</c>) first draws the whole plot into a new raster
    /// canvas of the same size and throws it away — that drawing settles the axes and the layout — and only then draws
    /// it as SVG; here the PNG's drawing is that first drawing, and the SVG is drawn after it as the library would (no
    /// clearing, the document closed before it is read). The raster drawing was a third of the charts' time, and its
    /// canvas new memory.
    /// </summary>
    /// <param name="plot">A plot not drawn yet.</param>
    public static (byte[] Png, string Svg) Encode(Plot plot, int width, int height)
    {
        var png = EncodePng(plot, width, height);
        using var stream = new MemoryStream();
        var clear = plot.RenderManager.ClearCanvasBeforeEachRender;
        using (var canvas = SKSvgCanvas.Create(new SKRect(0, 0, width, height), stream))
        {
            plot.RenderManager.ClearCanvasBeforeEachRender = false;
            try
            {
                plot.Render(canvas, width, height);
            }
            finally
            {
                plot.RenderManager.ClearCanvasBeforeEachRender = clear;
            }
        }
        return (png, SvgClipIds.Renumber(Encoding.UTF8.GetString(stream.GetBuffer(), 0, (int)stream.Length)));
    }

    /// <summary>
    /// The plot as PNG: the same pixels as the drawing library's own PNG, encoded with the "up" row filter and zlib
    /// level 3. The library tries every filter on every row at level 6, which made PNG encoding the largest part of
    /// drawing a report's charts — a third of the time after the pass of a Native AOT `analyze` (busy perf.data: 20
    /// → 7 ms for the who-woke-whom chart, the file 6 % larger; docs/performance.md, "busy-aot").
    /// </summary>
    /// <remarks>
    /// The picture is drawn into pixels of the managed heap (zeroed, as the library's own are), not memory the library
    /// gets from malloc: those were new pages for every chart, and on the virtual machines we measure on each new 4 KiB
    /// page costs ~11 µs to fault in (clearing a chart's canvas was ~3 % of `analyze`'s CPU time), where the heap's
    /// pages are huge ones (docs/performance.md#huge-page-heap).
    /// <para>
    /// A PNG holds straight (not premultiplied) alpha, so the encoder converts a premultiplied canvas pixel by pixel
    /// first. Where every pixel is opaque (a chart's background is) both forms are the same bytes: the canvas is then
    /// handed over as straight alpha and written as it is, the same PNG without the conversion (a fifth of the native
    /// drawing library's time in `analyze`; docs/performance.md#opaque-png).
    /// </para>
    /// </remarks>
    public static byte[] EncodePng(Plot plot, int width, int height) =>
        EncodePng(plot, width, height, straightWhenOpaque: true);

    /// <param name="straightWhenOpaque">False: always through the encoder's conversion from premultiplied alpha
    /// (tests compare the two).</param>
    internal static unsafe byte[] EncodePng(Plot plot, int width, int height, bool straightWhenOpaque)
    {
        var info = new SKImageInfo(width, height, SKColorType.Rgba8888, SKAlphaType.Premul);
        var memory = new byte[info.BytesSize64];
        fixed (byte* start = memory)
        {
            using var surface = SKSurface.Create(info, (IntPtr)start, info.RowBytes)
                ?? throw new InvalidOperationException($"the drawing library made no {width}x{height} canvas");
            plot.Render(surface.Canvas, width, height);
            using var pixels = straightWhenOpaque && IsOpaque(memory)
                ? new SKPixmap(info.WithAlphaType(SKAlphaType.Unpremul), (IntPtr)start, info.RowBytes)
                : surface.PeekPixels();
            using var data = pixels.Encode(new SKPngEncoderOptions(SKPngEncoderFilterFlags.Up, zLibLevel: 3))
                ?? throw new InvalidOperationException($"the drawing library did not encode a {width}x{height} PNG");
            return data.ToArray();
        }
    }

    /// <summary>Whether every pixel of RGBA 8888 <paramref name="rgba"/> has alpha 255.</summary>
    internal static bool IsOpaque(ReadOnlySpan<byte> rgba)
    {
        var pixels = MemoryMarshal.Cast<byte, uint>(rgba);
        // Alpha is each pixel's fourth byte: the top one of its uint on a little-endian machine.
        var alpha = BitConverter.IsLittleEndian ? 0xFF00_0000u : 0x0000_00FFu;
        var i = 0;
        if (Vector.IsHardwareAccelerated)
        {
            var mask = new Vector<uint>(alpha);
            for (; i <= pixels.Length - Vector<uint>.Count; i += Vector<uint>.Count)
                if ((new Vector<uint>(pixels[i..]) & mask) != mask) return false;
        }
        for (; i < pixels.Length; i++)
            if ((pixels[i] & alpha) != alpha) return false;
        return true;
    }
}
