using System.Globalization;
using ScottPlot;
using ScottPlot.Panels;
using ScottPlot.Plottables;
using ScottPlot.TickGenerators;

namespace TraceLab.Charts;

/// <summary>
/// Gives each text of a built plot (title, axis labels, tick labels, colour bar, text and annotation plottables,
/// legend items) the <see cref="ReducedCmapTypeface"/> of its typeface when every character it can draw is in the
/// reduced map; any other text (a thread name in another script, a label this class does not know) keeps the original
/// typeface. Either way the picture is the same, byte for byte (tests/TraceLab.Tests/Charts/ReducedCmapTests.cs).
/// </summary>
public static class ReducedCmapLabels
{
    /// <summary>Call on the thread that then draws the plot: tick labels the drawing library writes itself use that
    /// thread's culture.</summary>
    public static void Apply(Plot plot)
    {
        var numbers = NumberCharacters(NumberFormatInfo.CurrentInfo);
        foreach (var panel in plot.Axes.GetPanels())
        {
            switch (panel)
            {
                case IAxis axis:
                    Axis(axis, numbers);
                    break;
                case ColorBar bar:
                    Axis(bar.Axis, numbers);
                    break;
                case TitlePanel title:
                    Use(title.Label, title.Label.Text);
                    break;
            }
        }
        foreach (var plottable in plot.GetPlottables())
        {
            if (plottable is Text text) Use(text.LabelStyle, text.LabelStyle.Text);
            else if (plottable is Annotation annotation) Use(annotation.LabelStyle, annotation.LabelStyle.Text);
        }
        Legend(plot.Legend);
    }

    private static void Axis(IAxis axis, string numbers)
    {
        Use(axis.Label, axis.Label.Text);
        var ticks = axis.TickGenerator switch
        {
            NumericManual manual => ManualLabels(manual),
            NumericAutomatic automatic when automatic.LabelFormatter == LabelFormatters.Numeric => numbers,
            _ => null,
        };
        if (ticks is not null) Use(axis.TickLabelStyle, ticks);
    }

    /// <summary>
    /// The legend builds its items from the plottables at each drawing, each with a label style of its own: they are
    /// built here once and kept as the legend's manual items (in the same order), so their typeface can be set.
    /// </summary>
    private static void Legend(Legend legend)
    {
        var items = legend.GetItems();
        legend.ManualItems = [.. items];
        legend.DisplayPlottableLegendItems = false;
        foreach (var item in items) Use(item.LabelStyle, item.LabelStyle.Text);
    }

    /// <summary>All the labels of a manual tick generator (it hands them out only for a range, once asked).</summary>
    private static string ManualLabels(NumericManual manual)
    {
        using var paint = Paint.NewDisposablePaint();
        manual.Regenerate(new CoordinateRange(double.NegativeInfinity, double.PositiveInfinity), Edge.Bottom,
            new PixelLength(1), paint, new LabelStyle());
        return string.Concat(manual.Ticks.Select(t => t.Label));
    }

    /// <summary>What the library's default tick formatter (N0 or G in the current culture) can write.</summary>
    private static string NumberCharacters(NumberFormatInfo f) => "0123456789E()" + f.NegativeSign + f.PositiveSign
        + f.NumberDecimalSeparator + f.NumberGroupSeparator + f.NaNSymbol + f.PositiveInfinitySymbol
        + f.NegativeInfinitySymbol;

    private static void Use(LabelStyle label, string text)
    {
        var original = label.Font ?? Fonts.GetTypeface(label.FontName, label.Bold, label.Italic);
        if (ReducedCmapTypefaces.Of(original) is { } reduced && reduced.Draws(text)) label.Font = reduced.Typeface;
    }
}
