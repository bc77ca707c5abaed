using System.Globalization;
using System.Net;
using System.Text;

namespace TraceLab.Sweeps.Plots;

public sealed record ChartPoint(double X, string XLabel, double Median, double Min, double Max);

public sealed record ChartSeries(string Label, IReadOnlyList<ChartPoint> Points);

/// <summary>
/// A line chart as standalone SVG: one line per series through the medians, min–max error bars, a legend, nice
/// y ticks, x ticks at the swept values (linear, log or categorical). Every series is a &lt;g data-series&gt; and
/// every point a &lt;g data-x data-median data-min data-max&gt;, so tests and scripts can read the numbers back.
/// </summary>
public sealed class LineChart
{
    private const int Width = 960, Height = 540;
    private const double Left = 90, Right = 700, Top = 70, Bottom = 470;

    private static readonly string[] Palette =
        ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
    private static readonly string[] Dashes = ["", "6,4", "2,3", "8,3,2,3"];

    public required string Title { get; init; }
    public string? Subtitle { get; init; }
    public required string XLabel { get; init; }
    public required string YLabel { get; init; }
    public bool LogX { get; init; }
    /// <summary>Log-scale y axis: for series that differ by orders of magnitude (cs vs mutex).</summary>
    public bool LogY { get; init; }
    /// <summary>Evenly spaced x positions labelled by <see cref="ChartPoint.XLabel"/> (non-numeric swept values).</summary>
    public bool Categorical { get; init; }
    public required IReadOnlyList<ChartSeries> Series { get; init; }

    public string ToSvg()
    {
        var sb = new StringBuilder();
        var all = Series.SelectMany(s => s.Points).ToList();
        var xs = all.Select(p => (p.X, p.XLabel)).Distinct().OrderBy(p => p.X).ToList();
        var top = all.Count == 0 ? 1 : all.Max(p => Math.Max(p.Max, p.Median));
        IReadOnlyList<double> yTicks;
        Func<double, double> fy;
        if (LogY)
        {
            var low = all.SelectMany(p => new[] { p.Min, p.Median }).Where(v => v > 0).DefaultIfEmpty(top).Min();
            yTicks = NiceScale.LogTicks(low, top);
            fy = Math.Log10;
        }
        else
        {
            yTicks = NiceScale.Ticks(0, top, 7);
            fy = y => y;
        }
        double yMax = fy(yTicks[^1]), yMin = fy(yTicks[0]);
        Func<double, double> px = XMap(xs.Select(p => p.X).ToList());
        // Values below the axis (0 on a log axis) sit on its floor.
        double py(double y) => Bottom - (Math.Max(yMin, LogY && y <= 0 ? yMin : fy(y)) - yMin) / (yMax - yMin) * (Bottom - Top);

        sb.Append(CultureInfo.InvariantCulture, $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{Height}\" viewBox=\"0 0 {Width} {Height}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"13\">\n");
        sb.Append($"<title>{E(Title)}</title>\n");
        sb.Append(CultureInfo.InvariantCulture, $"<rect width=\"{Width}\" height=\"{Height}\" fill=\"white\"/>\n");
        sb.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left}\" y=\"30\" font-size=\"18\" font-weight=\"bold\">{E(Title)}</text>\n");
        if (Subtitle is not null) sb.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left}\" y=\"52\" fill=\"#555\">{E(Subtitle)}</text>\n");

        // Grid and y ticks.
        sb.Append("<g class=\"y-axis\">\n");
        foreach (var t in yTicks)
        {
            var y = py(t);
            sb.Append(CultureInfo.InvariantCulture, $"<line x1=\"{Left}\" y1=\"{y:0.##}\" x2=\"{Right}\" y2=\"{y:0.##}\" stroke=\"#e5e5e5\"/>\n");
            sb.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left - 8}\" y=\"{y + 4:0.##}\" text-anchor=\"end\">{E(TickText(t))}</text>\n");
        }
        sb.Append("</g>\n<g class=\"x-axis\">\n");
        var lastLabelX = double.NegativeInfinity;
        foreach (var (x, label) in xs)
        {
            var X = px(x);
            sb.Append(CultureInfo.InvariantCulture, $"<line x1=\"{X:0.##}\" y1=\"{Bottom}\" x2=\"{X:0.##}\" y2=\"{Bottom + 5}\" stroke=\"#333\"/>\n");
            // Crowded ticks (log scale near the top) keep their mark but drop labels that would collide.
            if (X - lastLabelX < 7.5 * Math.Max(2, label.Length)) continue;
            sb.Append(CultureInfo.InvariantCulture, $"<text x=\"{X:0.##}\" y=\"{Bottom + 20}\" text-anchor=\"middle\">{E(label)}</text>\n");
            lastLabelX = X;
        }
        sb.Append("</g>\n");
        sb.Append(CultureInfo.InvariantCulture, $"<rect x=\"{Left}\" y=\"{Top}\" width=\"{Right - Left}\" height=\"{Bottom - Top}\" fill=\"none\" stroke=\"#333\"/>\n");
        sb.Append(CultureInfo.InvariantCulture, $"<text x=\"{(Left + Right) / 2}\" y=\"{Bottom + 45}\" text-anchor=\"middle\">{E(XLabel + (LogX ? " (log scale)" : ""))}</text>\n");
        sb.Append(CultureInfo.InvariantCulture, $"<text transform=\"translate(24 {(Top + Bottom) / 2}) rotate(-90)\" text-anchor=\"middle\">{E(YLabel + (LogY ? " (log scale)" : ""))}</text>\n");

        // Series: error bars, line through the medians, markers.
        for (var i = 0; i < Series.Count; i++)
        {
            var s = Series[i];
            var color = Palette[i % Palette.Length];
            var dash = Dashes[i / Palette.Length % Dashes.Length];
            // Small horizontal offsets keep overlapping error bars of different series apart.
            var offset = Series.Count == 1 ? 0 : (i - (Series.Count - 1) / 2.0) * Math.Min(4, 24.0 / Series.Count);
            var pts = s.Points.OrderBy(p => p.X).ToList();
            sb.Append(CultureInfo.InvariantCulture, $"<g class=\"series\" id=\"series-{i}\" data-series=\"{E(s.Label)}\">\n");
            var path = string.Join(" ", pts.Select(p => string.Create(CultureInfo.InvariantCulture, $"{px(p.X) + offset:0.##},{py(p.Median):0.##}")));
            sb.Append(CultureInfo.InvariantCulture, $"<polyline points=\"{path}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{(dash.Length > 0 ? $" stroke-dasharray=\"{dash}\"" : "")}/>\n");
            foreach (var p in pts)
            {
                var X = px(p.X) + offset;
                sb.Append(CultureInfo.InvariantCulture, $"<g class=\"point\" data-x=\"{E(p.XLabel)}\" data-median=\"{p.Median:R}\" data-min=\"{p.Min:R}\" data-max=\"{p.Max:R}\">");
                sb.Append(CultureInfo.InvariantCulture, $"<line x1=\"{X:0.##}\" y1=\"{py(p.Min):0.##}\" x2=\"{X:0.##}\" y2=\"{py(p.Max):0.##}\" stroke=\"{color}\" stroke-width=\"1.2\"/>");
                foreach (var y in new[] { p.Min, p.Max })
                    sb.Append(CultureInfo.InvariantCulture, $"<line x1=\"{X - 4:0.##}\" y1=\"{py(y):0.##}\" x2=\"{X + 4:0.##}\" y2=\"{py(y):0.##}\" stroke=\"{color}\" stroke-width=\"1.2\"/>");
                sb.Append(CultureInfo.InvariantCulture, $"<circle cx=\"{X:0.##}\" cy=\"{py(p.Median):0.##}\" r=\"3.5\" fill=\"{color}\"><title>{E(s.Label)} @ {E(p.XLabel)}: median {p.Median:G4}, min {p.Min:G4}, max {p.Max:G4}</title></circle></g>\n");
            }
            sb.Append("</g>\n");
        }

        // Legend to the right of the plot.
        sb.Append("<g class=\"legend\">\n");
        sb.Append(CultureInfo.InvariantCulture, $"<text x=\"{Right + 20}\" y=\"{Top + 4}\" font-weight=\"bold\">series (median, min–max)</text>\n");
        for (var i = 0; i < Series.Count; i++)
        {
            var y = Top + 26 + i * 20;
            var color = Palette[i % Palette.Length];
            var dash = Dashes[i / Palette.Length % Dashes.Length];
            sb.Append(CultureInfo.InvariantCulture, $"<line x1=\"{Right + 20}\" y1=\"{y - 4}\" x2=\"{Right + 48}\" y2=\"{y - 4}\" stroke=\"{color}\" stroke-width=\"2\"{(dash.Length > 0 ? $" stroke-dasharray=\"{dash}\"" : "")}/>");
            sb.Append(CultureInfo.InvariantCulture, $"<circle cx=\"{Right + 34}\" cy=\"{y - 4}\" r=\"3.5\" fill=\"{color}\"/>");
            sb.Append(CultureInfo.InvariantCulture, $"<text x=\"{Right + 56}\" y=\"{y}\">{E(Shorten(Series[i].Label))}</text>\n");
        }
        sb.Append("</g>\n</svg>\n");
        return sb.ToString();

        static string Shorten(string label) => label.Length > 30 ? label[..29] + "…" : label;
    }

    private Func<double, double> XMap(List<double> xs)
    {
        const double pad = 30;
        if (xs.Count == 0) return _ => (Left + Right) / 2;
        if (Categorical || xs.Count == 1)
        {
            var index = xs.Select((x, i) => (x, i)).ToDictionary(t => t.x, t => t.i);
            var step = xs.Count == 1 ? 0 : (Right - Left - 2 * pad) / (xs.Count - 1);
            return x => xs.Count == 1 ? (Left + Right) / 2 : Left + pad + index[x] * step;
        }
        Func<double, double> f = LogX ? Math.Log2 : x => x;
        double lo = f(xs[0]), hi = f(xs[^1]);
        return x => Left + pad + (f(x) - lo) / (hi - lo) * (Right - Left - 2 * pad);
    }

    private static string TickText(double v) =>
        v == 0 ? "0" : Math.Abs(v) >= 10000 ? v.ToString("#,0", CultureInfo.InvariantCulture) : v.ToString("0.####", CultureInfo.InvariantCulture);

    private static string E(string s) => WebUtility.HtmlEncode(s);
}
