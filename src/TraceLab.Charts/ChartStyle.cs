using System.Globalization;
using ScottPlot;

namespace TraceLab.Charts;

/// <summary>What every chart shares: size, colours, and duration labels on a log2 axis.</summary>
internal static class ChartStyle
{
    public const int Width = 900, Height = 420;

    /// <summary>Tableau 10: distinct on screen and in print, and readable by most colour-blind people.</summary>
    public static readonly Color[] Palette = Color.FromHex(
        ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]);

    public static Color ColorOf(int i) => Palette[i % Palette.Length];

    public static Plot NewPlot(string title)
    {
        var plot = new Plot();
        plot.Title(title, 15);
        return plot;
    }

    /// <summary>"750 ns", "12 µs", "3.3 ms", "2 s": the unit that keeps 1–3 digits before the point.</summary>
    public static string Duration(double ns) => ns switch
    {
        < 1_000 => F(ns) + " ns",
        < 1_000_000 => F(ns / 1e3) + " µs",
        < 1_000_000_000 => F(ns / 1e6) + " ms",
        _ => F(ns / 1e9) + " s",
    };

    private static string F(double v) => v.ToString(v < 10 ? "0.#" : "0", CultureInfo.InvariantCulture);
}
