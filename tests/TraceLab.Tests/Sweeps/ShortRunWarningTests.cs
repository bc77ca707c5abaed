using TraceLab.Sweeps.Output;

namespace TraceLab.Tests.Sweeps;

/// <summary>The sweep report warns when runs are too short to time (median elapsed under 100 ms).</summary>
public sealed class ShortRunWarningTests
{
    [Fact]
    public void Points_with_a_median_under_100_ms_are_counted_and_the_shortest_named()
    {
        var data = new SyntheticSweep()
            .Add("cs", "1", 0.012, 0.009, 0.150)   // median 12 ms: short (one long repeat does not hide it)
            .Add("cs", "5", 0.080, 0.120, 0.099)   // median 99 ms: short
            .Add("mutex", "1", 1.2, 1.3, 1.1)      // long
            .Add("mutex", "5", 0.1, 0.1, 0.1)      // exactly 100 ms: not short
            .Data();

        var warning = SweepSummary.ShortRunWarning(data);

        Assert.NotNull(warning);
        Assert.StartsWith(
            "short runs: 2 of 4 points have a median elapsed under 100 ms (shortest 12 ms at p00, cs @ 1)", warning);
    }

    [Fact]
    public void No_warning_when_every_point_runs_at_least_100_ms() =>
        Assert.Null(SweepSummary.ShortRunWarning(new SyntheticSweep().Add("cs", "1", 0.2, 0.3, 0.25).Data()));
}
