using System.Globalization;

namespace TraceLab.Reporting.Tables;

/// <summary>Cell and note formatting shared by the sections' views.</summary>
internal static class Format
{
    /// <summary>Spectre.Console markup for literal text (what its Markup.Escape does): brackets doubled.</summary>
    public static string Escape(string text) => text.Replace("[", "[[", StringComparison.Ordinal)
        .Replace("]", "]]", StringComparison.Ordinal);

    /// <summary>A share as report.md writes it: "12.3%", or "n/a".</summary>
    public static string Pct(double? share) =>
        share is { } s ? (s * 100).ToString("0.0", CultureInfo.InvariantCulture) + "%" : "n/a";

    /// <summary>A share as the terminal writes it: "12.3 %".</summary>
    public static string P1(double share) => share.ToString("P1", CultureInfo.InvariantCulture);

    public static string Int(long n) => n.ToString(CultureInfo.InvariantCulture);

    /// <summary>A thread id as reports show it: "1234", or "1234#2" for the second thread with that tid.</summary>
    public static string Tid(int id) => Core.ThreadIds.Display(id);
}
