using TraceLab.Analyzers;

namespace TraceLab.Tests.Analyzers;

public sealed class LatencyHistogramTests
{
    private static readonly double[] Percentiles = [0.01, 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100];

    private static long ExactNearestRank(long[] sorted, double p)
    {
        var rank = (long)Math.Ceiling(p / 100.0 * sorted.Length);
        return sorted[Math.Clamp(rank, 1, sorted.Length) - 1];
    }

    [Fact]
    public void Percentiles_are_within_one_sixty_fourth_of_the_exact_nearest_rank()
    {
        var random = new Random(20240611);
        var samples = new long[10_000];
        var logMax = Math.Log(10_000_000_000.0);   // 10 s in ns
        for (var i = 0; i < samples.Length; i++)
            samples[i] = Math.Max(1, (long)Math.Exp(random.NextDouble() * logMax));
        samples[0] = 1;
        samples[1] = 10_000_000_000;

        var h = new LatencyHistogram();
        foreach (var s in samples) h.Add(s);
        var sorted = samples.Order().ToArray();

        Assert.Equal(samples.Length, h.Count);
        Assert.Equal(samples.Sum(), h.Sum);
        Assert.Equal(1, h.Min);
        Assert.Equal(10_000_000_000, h.Max);
        foreach (var p in Percentiles)
        {
            var exact = ExactNearestRank(sorted, p);
            var got = h.Percentile(p);
            Assert.True(Math.Abs(got - exact) <= exact / 64.0,
                $"p{p}: histogram {got}, exact {exact}, error {Math.Abs(got - exact) / (double)exact:P3} > 1/64");
        }
    }

    /// <summary>
    /// The bucket of <paramref name="v"/> as docs/metrics.md#latency-histogram defines it, computed with a loop instead
    /// of the histogram's bit arithmetic: below 64 one value per bucket; above, 32 buckets per power of two, so a
    /// bucket
    /// is 2^(bit length − 6) wide and starts at a multiple of its width.
    /// </summary>
    private static long ReferenceMidpoint(long v)
    {
        if (v < 64) return v;
        var bits = 0;
        for (var x = v; x > 0; x >>= 1) bits++;
        var width = 1L << (bits - 6);
        var lo = v - v % width;
        return lo + (width - 1) / 2;
    }

    [Fact]
    public void Percentiles_are_the_midpoint_of_the_nearest_rank_samples_bucket()
    {
        // Bucket edges (2^k − 1, 2^k, 2^k + 1 around 64 and up), huge values, and a negative one (counted as 0).
        var samples = new List<long> { -5, 0, 1, 31, 32, 63, 64, 65, 95, 96, 127, 128, 129, 191, 192, 255, 256,
            1L << 40, (1L << 62) + 12345 };
        for (var k = 7; k < 62; k += 5)
            samples.AddRange([(1L << k) - 1, 1L << k, (1L << k) + 1, (1L << k) + (1L << (k - 1))]);
        var random = new Random(7);
        for (var i = 0; i < 2000; i++) samples.Add((long)(random.NextDouble() * random.NextDouble() * 5_000_000));

        var h = new LatencyHistogram();
        foreach (var v in samples) h.Add(v);
        var sorted = samples.Select(v => Math.Max(v, 0)).Order().ToArray();

        Assert.Equal(0, h.Min);
        Assert.Equal(sorted[^1], h.Max);
        foreach (var p in Percentiles.Concat([0.0, 2, 33.3, 66.6, 98]))
        {
            var expected = Math.Clamp(ReferenceMidpoint(ExactNearestRank(sorted, p)), sorted[0], sorted[^1]);
            Assert.Equal(expected, h.Percentile(p));
        }
    }

    [Fact]
    public void Small_values_are_exact()
    {
        var h = new LatencyHistogram();
        for (var v = 0; v < 64; v++) h.Add(v);
        Assert.Equal(0, h.Percentile(0));
        Assert.Equal(31, h.Percentile(50));
        Assert.Equal(63, h.Percentile(100));
    }

    [Fact]
    public void Clear_forgets_everything()
    {
        var h = new LatencyHistogram();
        h.Add(5_000_000);
        h.Add(7);
        h.Clear();
        Assert.Equal(0, h.Count);
        Assert.Equal(0, h.Sum);
        Assert.Equal(0, h.Max);
        Assert.Equal(0, h.Percentile(50));

        h.Add(1000);
        Assert.Equal(1, h.Count);
        Assert.Equal(1000, h.Min);
        Assert.Equal(1000, h.Max);
        Assert.Equal(1000, h.Percentile(1));
        Assert.Equal(1000, h.Percentile(100));
    }

    [Fact]
    public void Negative_values_count_as_zero()
    {
        var h = new LatencyHistogram();
        h.Add(-5);
        Assert.Equal(0, h.Min);
        Assert.Equal(0, h.Percentile(50));
    }

    /// <summary>
    /// A histogram's first values are counted in fields (one or two buckets, at most 64 values) and moved into rows
    /// when a third bucket or the 65th value comes: in every state it reports what the bucket definition says.
    /// </summary>
    [Theory]
    [InlineData(new long[] { 1000 })]
    [InlineData(new long[] { 1000, 5 })]                       // the second bucket below the first
    [InlineData(new long[] { 5, 1000, 1001, 5 })]
    [InlineData(new long[] { 5, 1000, 70_000 })]               // a third bucket: rows
    [InlineData(new long[] { 70_000, 5, 1000, 5, 70_001 })]
    public void Few_buckets_report_as_the_bucket_definition_says(long[] values)
    {
        foreach (var repeat in new[] { 1, 40 })                  // 40 × 2 or more values: past 64, rows
        {
            var samples = Enumerable.Repeat(values, repeat).SelectMany(v => v).ToArray();
            var h = new LatencyHistogram();
            foreach (var v in samples) h.Add(v);
            var sorted = samples.Order().ToArray();

            foreach (var p in Percentiles.Concat([0.0, 50]))
            {
                var expected = Math.Clamp(ReferenceMidpoint(ExactNearestRank(sorted, p)), sorted[0], sorted[^1]);
                Assert.Equal(expected, h.Percentile(p));
            }
            var buckets = h.Buckets().ToList();
            Assert.Equal(samples.Length, buckets.Sum(b => b.Count));
            Assert.Equal(buckets.OrderBy(b => b.Low), buckets);
            Assert.All(samples, v => Assert.Contains(buckets, b => v >= b.Low && v < b.Low + b.Width));
        }
    }

    /// <summary>
    /// Rows are kept in one array in row order and inserted as values first reach them, in any order: every bucket
    /// holds exactly the values the bucket definition puts in it, whatever order the rows were created in.
    /// </summary>
    [Fact]
    public void Every_bucket_counts_exactly_its_values_whatever_order_rows_are_created_in()
    {
        var random = new Random(11);
        var samples = new long[20_000];
        for (var i = 0; i < samples.Length; i++) samples[i] = (long)Math.Exp(random.NextDouble() * Math.Log(1e15));
        var h = new LatencyHistogram();
        foreach (var v in samples) h.Add(v);

        var expected = samples.GroupBy(ReferenceLow).OrderBy(g => g.Key).Select(g => (g.Key, (long)g.Count())).ToList();
        Assert.Equal(expected, h.Buckets().Select(b => (b.Low, b.Count)).ToList());
        Assert.True(expected.Count > 500, $"{expected.Count} buckets: too few rows exercised");

        static long ReferenceLow(long v)
        {
            if (v < 64) return v;
            var bits = 0;
            for (var x = v; x > 0; x >>= 1) bits++;
            var width = 1L << (bits - 6);
            return v - (v % width);
        }
    }
}
