using TraceLab.Analyzers.Findings;
using TraceLab.Reporting.Findings;

namespace TraceLab.Tests.Findings;

public sealed class WindowSeriesTests
{
    private const long Ms = 1_000_000;

    [Fact]
    public void An_interval_is_split_over_the_buckets_it_spans()
    {
        var clock = new WindowClock();
        clock.Start(0);
        var s = clock.NewSeries();
        s.AddInterval(Ms / 2, 3 * Ms);        // half of bucket 0, all of 1 and 2
        var snap = s.Snapshot();
        Assert.Equal(Ms, snap.WidthNs);
        Assert.Equal([Ms / 2, Ms, Ms], snap.Ns[..3]);
        Assert.Equal(5 * Ms / 2, s.TotalNs);
    }

    [Fact]
    public void A_time_past_the_last_bucket_doubles_the_width_and_folds_pairs()
    {
        var clock = new WindowClock();
        clock.Start(1000);
        var s = clock.NewSeries();
        s.AddInterval(1000, 1000 + Ms);                                         // bucket 0
        s.AddInterval(1000 + 3 * Ms, 1000 + 4 * Ms);                            // bucket 3
        s.AddInterval(1000 + 300 * Ms, 1000 + 301 * Ms);                        // needs width 2 ms
        var snap = s.Snapshot();
        Assert.Equal(2 * Ms, snap.WidthNs);
        Assert.Equal(Ms, snap.Ns[0]);
        Assert.Equal(Ms, snap.Ns[1]);                                           // old buckets 2 and 3
        Assert.Equal(Ms, snap.Ns[150]);
        Assert.Equal(3 * Ms, snap.Ns.Sum());
    }

    [Fact]
    public void Windows_are_the_heaviest_buckets_with_neighbours_merged()
    {
        long[] ns = [0, 5, 9, 0, 0, 7, 0, 1];
        var windows = FindingContext.Windows(new BucketSeries(2 * Ms, ns));
        // Picks buckets 2 (9), 5 (7), 1 (5); 1 and 2 merge into one 4-ms window of weight 14.
        Assert.Equal(["2:4", "10:2"], windows.Select(w => w.ToString()));
        Assert.Empty(FindingContext.Windows(BucketSeries.Empty));
    }
}
