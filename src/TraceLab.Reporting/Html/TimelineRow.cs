namespace TraceLab.Reporting.Html;

/// <summary>One thread row of the timeline: which thread, and the label shown at its left.</summary>
public sealed record TimelineRow(int Tid, string Label);

/// <summary>An SVG to embed in report.html (e.g. a sweep plot), with its caption.</summary>
public sealed record EmbeddedPlot(string Title, string Svg)
{
    /// <summary>
    /// Reads an SVG file; the XML declaration and doctype are dropped so that it can sit inline in HTML.
    /// </summary>
    public static EmbeddedPlot FromFile(string path, string? title = null)
    {
        var svg = File.ReadAllText(path);
        var at = svg.IndexOf("<svg", StringComparison.OrdinalIgnoreCase);
        if (at < 0) throw new InvalidDataException($"{path}: not an SVG file (no <svg> element)");
        return new EmbeddedPlot(title ?? Path.GetFileNameWithoutExtension(path), svg[at..]);
    }
}

/// <summary>
/// A chart drawn for report.html (docs/metrics.md, "Charts"): embedded as a data: PNG, so the page loads nothing and
/// several charts' SVG ids cannot collide; <see cref="Name"/>.png and .svg are written beside the report.
/// </summary>
public sealed record EmbeddedChart(string Name, string Title, byte[] Png, int Width, int Height);
