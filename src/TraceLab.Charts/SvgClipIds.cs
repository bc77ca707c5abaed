using System.Globalization;
using System.Text.RegularExpressions;

namespace TraceLab.Charts;

/// <summary>
/// Numbers an SVG's clip-path ids from 0 in the order they appear. The drawing library takes them from one counter
/// for the whole process, so a chart's ids depended on which charts (and the warm-up chart) other threads drew
/// before it: the same report could give different chart-*.svg bytes from run to run.
/// </summary>
public static partial class SvgClipIds
{
    public static string Renumber(string svg)
    {
        var local = new Dictionary<string, string>(StringComparer.Ordinal);
        return ClipReference().Replace(svg, m =>
        {
            var id = m.Groups["id"].Value;
            if (!local.TryGetValue(id, out var renamed))
            {
                renamed = "cl_" + local.Count.ToString("x", CultureInfo.InvariantCulture);
                local.Add(id, renamed);
            }
            return m.Groups["before"].Value + renamed + m.Groups["after"].Value;
        });
    }

    /// <summary>A clip path's id where it is defined (id="cl_7") or used (url(#cl_7)).</summary>
    [GeneratedRegex("(?<before>id=\"|url\\(#)(?<id>cl_[0-9a-f]+)(?<after>[\")])")]
    private static partial Regex ClipReference();
}
