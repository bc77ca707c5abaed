using System.Globalization;

namespace TraceLab.Reporting;

/// <summary>
/// Counts in report sentences: "1 episode", "3 episodes", "once". A finding about a single event (a short trace, one
/// handoff) must read as English too.
/// </summary>
public static class EnglishCount
{
    /// <summary>"{n:N0} {noun}", the noun plural (<paramref name="noun"/> + "s" unless given) unless n is 1.</summary>
    public static string Of(long n, string noun, string? plural = null) =>
        string.Create(CultureInfo.InvariantCulture, $"{n:N0} {(n == 1 ? noun : plural ?? noun + "s")}");

    /// <summary>"once", or "{n:N0} times".</summary>
    public static string Times(long n) =>
        n == 1 ? "once" : string.Create(CultureInfo.InvariantCulture, $"{n:N0} times");
}
