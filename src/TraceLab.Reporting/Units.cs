using System.Globalization;

namespace TraceLab.Reporting;

internal static class Units
{
    public static string Ms(long ns) => (ns / 1e6).ToString("0.0", CultureInfo.InvariantCulture);
    public static string Us(long ns) => (ns / 1e3).ToString("0.0", CultureInfo.InvariantCulture);
    public static string S(long ns) => (ns / 1e9).ToString("0.000", CultureInfo.InvariantCulture);
    public static string N(long n) => n.ToString("N0", CultureInfo.InvariantCulture);
}
