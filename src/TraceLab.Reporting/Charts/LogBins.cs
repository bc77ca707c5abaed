using TraceLab.Analyzers;

namespace TraceLab.Reporting.Charts;

/// <summary>Power-of-two bins of a <see cref="LatencyHistogram"/>: exact, since its buckets never straddle
/// one.</summary>
public static class LogBins
{
    /// <summary>Index of the bin holding <paramref name="ns"/>: floor(log2), with 0 in bin 0.</summary>
    public static int IndexOf(long ns) => ns <= 1 ? 0 : 63 - System.Numerics.BitOperations.LeadingZeroCount((ulong)ns);

    public static long LowOf(int index) => index == 0 ? 0 : 1L << index;

    public static long HighOf(int index) => 1L << (index + 1);

    /// <summary>Every bin from the lowest to the highest non-empty one (empty ones between included, so bars line
    /// up).</summary>
    public static IReadOnlyList<LogBin> From(LatencyHistogram histogram)
    {
        var counts = new long[64];
        int lo = 64, hi = -1;
        foreach (var (low, _, count) in histogram.Buckets())
        {
            var i = IndexOf(low);
            counts[i] += count;
            lo = Math.Min(lo, i);
            hi = Math.Max(hi, i);
        }
        var bins = new List<LogBin>();
        for (var i = lo; i <= hi; i++) bins.Add(new LogBin(LowOf(i), HighOf(i), counts[i]));
        return bins;
    }
}
