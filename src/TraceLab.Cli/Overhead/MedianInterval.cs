namespace TraceLab.Cli.Overhead;

/// <summary>
/// Distribution-free confidence interval of a median from order statistics: with n independent samples, the
/// number below the true median is Binomial(n, ½), so [x(k), x(n+1−k)] (1-based ranks) covers it with probability
/// 1 − 2·P(B ≤ k−1). The widest k that still reaches the requested level is the narrowest such interval. No
/// assumption about the shape of the distribution, which matters here: run times on a shared machine are skewed
/// and often bimodal.
/// </summary>
public static class MedianInterval
{
    /// <summary>
    /// The interval and its exact coverage, or null when n is too small to reach <paramref name="level"/> at all (n
    /// &lt; 6 for 95 %).
    /// </summary>
    public static (double Low, double High, double Coverage)? Of(IReadOnlyList<double> values, double level = 0.95)
    {
        var n = values.Count;
        if (n == 0) return null;
        var sorted = values.Order().ToArray();
        (int K, double Coverage)? best = null;
        for (var k = 1; k <= (n + 1) / 2; k++)
        {
            var coverage = 1 - 2 * BinomialHalfCdf(n, k - 1);
            if (coverage < level) break;
            best = (k, coverage);
        }
        if (best is not { } b) return null;
        return (sorted[b.K - 1], sorted[n - b.K], b.Coverage);
    }

    /// <summary>P(B ≤ m) for B ~ Binomial(n, ½), summed in doubles (n is a repeat count, ≤ 100).</summary>
    public static double BinomialHalfCdf(int n, int m)
    {
        if (m < 0) return 0;
        double term = Math.Pow(0.5, n), sum = 0;
        for (var i = 0; i <= Math.Min(m, n); i++)
        {
            sum += term;
            term = term * (n - i) / (i + 1);
        }
        return Math.Min(1, sum);
    }
}
