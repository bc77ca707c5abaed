using System.Globalization;

namespace TraceLab.Reporting;

/// <summary>The workload's own figures (workload.json `metrics`) as one line: "name value, name value, ...".</summary>
public static class WorkloadMetricsText
{
    public static string Format(IReadOnlyDictionary<string, double> metrics) =>
        string.Join(", ", metrics.Select(kv => $"{kv.Key} {Value(kv.Value)}"));

    // Whole numbers up to 10^15 are exact in a double and read best grouped; larger sums (throttle's) in G6.
    private static string Value(double v) =>
        Math.Abs(v) >= 1e15 ? v.ToString("G6", CultureInfo.InvariantCulture)
        : v == Math.Floor(v) ? v.ToString("N0", CultureInfo.InvariantCulture)
        : v.ToString("0.###", CultureInfo.InvariantCulture);
}
