using TraceLab.Analyzers;
using Xunit;

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
}
