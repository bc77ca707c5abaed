using ScottPlot;

namespace TraceLab.Charts;

/// <summary>A rendered chart: the file stem, its caption, and the same picture as PNG and as SVG.</summary>
public sealed record ChartImage(string Name, string Title, byte[] Png, string Svg, int Width, int Height)
{
    /// <summary>Renders <paramref name="plot"/> at <paramref name="width"/> × <paramref name="height"/>, both
    /// ways.</summary>
    public static ChartImage Render(string name, string title, Plot plot, int width = ChartStyle.Width,
        int height = ChartStyle.Height) =>
        new(name, title, plot.GetImageBytes(width, height, ImageFormat.Png),
            SvgClipIds.Renumber(plot.GetSvgXml(width, height)), width, height);
}
