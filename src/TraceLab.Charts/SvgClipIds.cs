using System.Text.RegularExpressions;

namespace TraceLab.Charts;

/// <summary>
/// Numbers an SVG's clip-path ids from 1 in the order they appear. SkiaSharp's SVG canvas takes them from one
/// process-wide counter, so a chart's ids depended on how many clips the charts drawn before it (in parallel, in
/// whatever order the threads ran) had taken: the same trace gave chart-*.svg files that differed from run to run.
/// </summary>
public static partial class SvgClipIds
{
    public static string Renumber(string svg)
    {
        var numbers = new Dictionary<string, int>(StringComparer.Ordinal);
        return ClipId().Replace(svg, m =>
        {
            if (!numbers.TryGetValue(m.Value, out var n)) numbers[m.Value] = n = numbers.Count + 1;
            return "cl_" + n.ToString(System.Globalization.CultureInfo.InvariantCulture);
        });
    }

    // Only where an id is defined or referenced: id="cl_1f", url(#cl_1f).
    [GeneratedRegex(@"(?<=id=""|url\(#)cl_[0-9a-f]+\b")]
    private static partial Regex ClipId();
}
