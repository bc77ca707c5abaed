namespace TraceLab.Analyzers;

/// <summary>
/// Log-linear histogram of non-negative durations (ns): values below 64 are exact; above, each power of two is split
/// into 32 linear buckets and a percentile reports its bucket's midpoint, so it is within 1/64 (1.6%) of the exact
/// sample value, with memory bounded by the value range, not the count.
/// Exponent rows are allocated on first use.
/// </summary>
public sealed class LatencyHistogram
{
    private const int SubBucketBits = 6;
    private const int SubBuckets = 1 << SubBucketBits;
    private readonly long[]?[] _rows = new long[64][];

    public long Count { get; private set; }
    public long Sum { get; private set; }
    public long Min { get; private set; } = long.MaxValue;
    public long Max { get; private set; }

    public void Clear()
    {
        Array.Clear(_rows);
        Count = Sum = Max = 0;
        Min = long.MaxValue;
    }

    public void Add(long value)
    {
        // Branch-free where the outcome is data-dependent (min/max, small or large value): this runs for most events
        // (ready latency, syscall gaps, handoffs), whose values are too irregular for the branch predictor.
        value = Math.Max(value, 0);
        Count++;
        Sum += value;
        Min = Math.Min(Min, value);
        Max = Math.Max(Max, value);
        // Values below 64 sit in row 0 at their own index; above, the row is the bit length minus 6 and the index the
        // top 6 bits (leading 1 included, so 32..63). Both as one formula: the shift is 0 below 64.
        var row = Math.Max(0, 64 - SubBucketBits - System.Numerics.BitOperations.LeadingZeroCount((ulong)value));
        var sub = (int)(value >> row) & (SubBuckets - 1);
        var r = _rows[row] ?? NewRow(row);
        r[sub]++;
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private long[] NewRow(int row) => _rows[row] = new long[SubBuckets];

    private static long LowerBound(int row, int sub) => row == 0 ? sub : (long)sub << row;

    /// <summary>
    /// The non-empty buckets in increasing order: every value in [<c>Low</c>, <c>Low + Width</c>) was counted in
    /// <c>Count</c>. Widths are powers of two, so power-of-two bins are exact sums of buckets (the report's charts).
    /// </summary>
    public IEnumerable<(long Low, long Width, long Count)> Buckets()
    {
        for (var row = 0; row < _rows.Length; row++)
        {
            if (_rows[row] is not { } r) continue;
            for (var sub = 0; sub < SubBuckets; sub++)
                if (r[sub] > 0) yield return (LowerBound(row, sub), row == 0 ? 1 : 1L << row, r[sub]);
        }
    }

    /// <summary>Nearest-rank percentile (p in 0..100): the smallest value with at least p% of samples at or below it.</summary>
    public long Percentile(double p)
    {
        if (Count == 0) return 0;
        var rank = (long)Math.Ceiling(p / 100.0 * Count);
        if (rank < 1) rank = 1;
        long seen = 0;
        for (var row = 0; row < _rows.Length; row++)
        {
            var r = _rows[row];
            if (r is null) continue;
            for (var sub = 0; sub < SubBuckets; sub++)
            {
                if (r[sub] == 0) continue;
                seen += r[sub];
                if (seen >= rank)
                {
                    // Middle of the bucket, kept inside the observed range.
                    var lo = LowerBound(row, sub);
                    var width = row == 0 ? 1 : 1L << row;
                    var mid = lo + (width - 1) / 2;
                    return Math.Clamp(mid, Min, Max);
                }
            }
        }
        return Max;
    }
}
