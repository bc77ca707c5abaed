using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace TraceLab.Analyzers;

/// <summary>
/// Log-linear histogram of non-negative durations (ns): values below 64 are exact; above, each power of two is split
/// into 32 linear buckets and a percentile reports its bucket's midpoint, so it is within 1/64 (1.6%) of the exact
/// sample value, with memory bounded by the value range, not the count.
/// Its first values are counted in fields (at most <see cref="SmallBuckets"/> buckets and
/// <see cref="SmallMaxCount"/> values); exponent rows are allocated only after that, each on first use.
/// </summary>
public sealed class LatencyHistogram
{
    private const int SubBucketBits = 6;
    private const int SubBuckets = 1 << SubBucketBits;
    /// <summary>
    /// Distinct buckets counted in the histogram's own fields before it takes rows: a short-lived thread of a
    /// whole-system trace fills one or two (100,000 such threads took 1 KB per histogram in rows, ~100 MB per
    /// analysis; docs/performance.md#many-threads).
    /// </summary>
    private const int SmallBuckets = 2;
    /// <summary>
    /// Values counted in the fields at most: past this the histogram takes rows even with few buckets, so a
    /// thread's steady stream of values costs the row lookup only, never the fields' compare-and-call path.
    /// </summary>
    private const int SmallMaxCount = 64;
    /// <summary>Shared by every histogram until it takes rows. Never written: <see cref="TakeRows"/> gives the
    /// histogram its own array first.</summary>
    private static readonly long[]?[] NoRows = new long[64][];
    private long[]?[] _rows = NoRows;
    /// <summary>While there are no rows: the buckets counted so far as bucket index + 1 (0: none), increasing,
    /// and their counts.</summary>
    private int _smallBucket0, _smallBucket1;
    private int _smallCount0, _smallCount1;

    public long Count { get; private set; }
    public long Sum { get; private set; }
    public long Min { get; private set; } = long.MaxValue;
    public long Max { get; private set; }

    public void Clear()
    {
        _rows = NoRows;
        _smallBucket0 = _smallBucket1 = _smallCount0 = _smallCount1 = 0;
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
        // Without bounds checks (row < 59 of 64 rows, sub − FirstSub(row) within the row's length): each check reads
        // the array's length, a cache line of its own apart from the slot, and on a busy system's thousands of threads
        // these lines are cold (this was 5 % of the Native AOT pass on a busy perf.data).
        var r = Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_rows), row);
        if (r is null) AddWithoutRow(row, sub);
        else Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(r), sub - FirstSub(row))++;
    }

    /// <summary>A value whose row does not exist yet: counted in the fields while they suffice, else in a new
    /// row.</summary>
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private void AddWithoutRow(int row, int sub)
    {
        if (ReferenceEquals(_rows, NoRows))
        {
            if (Count <= SmallMaxCount && AddSmall(row * SubBuckets + sub + 1)) return;
            TakeRows();
        }
        (_rows[row] ??= NewRow(row))[sub - FirstSub(row)]++;
    }

    /// <summary>
    /// The first index a row uses: 0 in row 0 (values 0..63, each its own), 32 in the others (their values' top 6 bits
    /// start with the leading 1). Branch-free: 32 exactly when row &gt; 0.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int FirstSub(int row) => (int)((uint)-row >> 31) << (SubBucketBits - 1);

    /// <summary>
    /// A row holds the indexes it uses only: above row 0, half of them. Rows are most of what a busy system's
    /// thousands of threads' histograms hold, and every new byte costs its page's first touch
    /// (docs/performance.md#histogram-rows).
    /// </summary>
    private static long[] NewRow(int row) => new long[SubBuckets - FirstSub(row)];

    /// <summary>Counts bucket index + 1 <paramref name="key"/> in the fields; false when both hold other
    /// buckets.</summary>
    private bool AddSmall(int key)
    {
        if (_smallBucket0 == key) _smallCount0++;
        else if (_smallBucket1 == key) _smallCount1++;
        else if (_smallBucket0 == 0) (_smallBucket0, _smallCount0) = (key, 1);
        else if (_smallBucket1 != 0) return false;
        else if (key > _smallBucket0) (_smallBucket1, _smallCount1) = (key, 1);
        else (_smallBucket1, _smallCount1, _smallBucket0, _smallCount0) = (_smallBucket0, _smallCount0, key, 1);
        return true;
    }

    /// <summary>Moves the buckets counted in the fields into rows of the histogram's own.</summary>
    private void TakeRows()
    {
        _rows = new long[64][];
        foreach (var (row, sub, count) in SmallBucketsInOrder())
            (_rows[row] ??= NewRow(row))[sub - FirstSub(row)] += count;
        _smallBucket0 = _smallBucket1 = _smallCount0 = _smallCount1 = 0;
    }

    private IEnumerable<(int Row, int Sub, long Count)> SmallBucketsInOrder()
    {
        if (_smallBucket0 != 0)
            yield return ((_smallBucket0 - 1) / SubBuckets, (_smallBucket0 - 1) % SubBuckets, _smallCount0);
        if (_smallBucket1 != 0)
            yield return ((_smallBucket1 - 1) / SubBuckets, (_smallBucket1 - 1) % SubBuckets, _smallCount1);
    }

    /// <summary>The non-empty buckets as (row, index in row, count), in increasing order of their values.</summary>
    private IEnumerable<(int Row, int Sub, long Count)> NonEmpty()
    {
        if (ReferenceEquals(_rows, NoRows))
        {
            foreach (var bucket in SmallBucketsInOrder()) yield return bucket;
            yield break;
        }
        for (var row = 0; row < _rows.Length; row++)
        {
            if (_rows[row] is not { } r) continue;
            var first = FirstSub(row);
            for (var sub = first; sub < SubBuckets; sub++)
                if (r[sub - first] > 0) yield return (row, sub, r[sub - first]);
        }
    }

    private static long LowerBound(int row, int sub) => row == 0 ? sub : (long)sub << row;

    private static long Width(int row) => row == 0 ? 1 : 1L << row;

    /// <summary>
    /// The non-empty buckets in increasing order: every value in [<c>Low</c>, <c>Low + Width</c>) was counted in
    /// <c>Count</c>. Widths are powers of two, so power-of-two bins are exact sums of buckets (the report's charts).
    /// </summary>
    public IEnumerable<(long Low, long Width, long Count)> Buckets() =>
        NonEmpty().Select(b => (LowerBound(b.Row, b.Sub), Width(b.Row), b.Count));

    /// <summary>
    /// Nearest-rank percentile (p in 0..100): the smallest value with at least p% of samples at or below it.
    /// </summary>
    public long Percentile(double p)
    {
        if (Count == 0) return 0;
        var rank = (long)Math.Ceiling(p / 100.0 * Count);
        if (rank < 1) rank = 1;
        long seen = 0;
        if (ReferenceEquals(_rows, NoRows))
        {
            foreach (var (row, sub, count) in SmallBucketsInOrder())
            {
                seen += count;
                if (seen >= rank) return Middle(row, sub);
            }
            return Max;
        }
        // The rows walked in place rather than through NonEmpty's iterator: the report asks two percentiles of several
        // histograms of each of a busy system's thousands of threads.
        for (var row = 0; row < _rows.Length; row++)
        {
            if (_rows[row] is not { } r) continue;
            var first = FirstSub(row);
            for (var sub = first; sub < SubBuckets; sub++)
            {
                var count = r[sub - first];
                seen += count;
                if (count > 0 && seen >= rank) return Middle(row, sub);
            }
        }
        return Max;
    }

    /// <summary>Middle of the bucket, kept inside the observed range.</summary>
    private long Middle(int row, int sub) => Math.Clamp(LowerBound(row, sub) + (Width(row) - 1) / 2, Min, Max);
}
