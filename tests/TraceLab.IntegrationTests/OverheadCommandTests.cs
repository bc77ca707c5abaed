using TraceLab.Capture.Linux;
using TraceLab.Cli.Commands;

namespace TraceLab.IntegrationTests;

/// <summary>
/// `tracelab overhead`: real untraced and traced runs; the slowdown is computed from the rounds' own elapsed times.
/// </summary>
public sealed class OverheadCommandTests
{
    [TracingFact]
    public async Task Slowdown_is_traced_over_untraced_elapsed_per_round_for_each_syscall_set()
    {
        var cmd = new OverheadCommand(Capture.QuietConsole());
        var results = await cmd.MeasureAsync(new OverheadCommand.Settings("timemutex", "mutex",
            new Dictionary<string, string> { ["iterations"] = "2000" }, Repeat: 3, [SyscallSet.None, SyscallSet.Lock],
                BufferKb: 16 * 1024));

        Assert.Equal([SyscallSet.None, SyscallSet.Lock], results.Select(r => r.Set));
        foreach (var r in results)
        {
            Assert.Equal(3, r.Slowdowns.Length);
            Assert.All(r.UntracedNs.Concat(r.TracedNs), ns => Assert.True(ns > 0));
            for (var i = 0; i < 3; i++)
            {
                Assert.Equal((double)r.TracedNs[i] / r.UntracedNs[i] - 1, r.Slowdowns[i], 12);
                Assert.True(r.Untraced[i].CpuNs > 0 && r.Traced[i].CpuNs > 0);
                Assert.Equal((double)r.Traced[i].CpuNs / r.Untraced[i].CpuNs - 1, r.CpuSlowdowns[i], 12);
            }
            // Three rounds cannot give a 95 % interval of the median (needs 6).
            Assert.Null(r.MedianInterval);
            Assert.Equal(r.Slowdowns.Order().ElementAt(1), r.Median, 12);
        }

        // Both sets share the untraced run of each round (interleaved rounds).
        Assert.Equal(results[0].UntracedNs, results[1].UntracedNs);
    }

    [Fact]
    public void Median_interval_of_eleven_rounds_is_second_to_tenth_value()
    {
        // P(B ≤ 1) = 12/2048 → coverage 1 − 24/2048; k = 3 would cover only 1 − 134/2048 < 95 %.
        var ci = TraceLab.Cli.Overhead.MedianInterval.Of([7, 3, 11, 1, 5, 9, 2, 10, 4, 8, 6]);
        Assert.NotNull(ci);
        Assert.Equal((2.0, 10.0), (ci.Value.Low, ci.Value.High));
        Assert.Equal(1 - 24.0 / 2048, ci.Value.Coverage, 12);
    }

    [Fact]
    public void Median_interval_needs_six_rounds_for_95_percent()
    {
        Assert.Null(TraceLab.Cli.Overhead.MedianInterval.Of([1, 2, 3, 4, 5]));
        var six = TraceLab.Cli.Overhead.MedianInterval.Of([6, 5, 4, 3, 2, 1]);
        Assert.Equal((1.0, 6.0, 1 - 2.0 / 64), six);
    }

    [Fact]
    public void Median_of_an_even_count_is_the_mean_of_the_middle_two() =>
        Assert.Equal(2.5, OverheadCommand.Median([4, 1, 3, 2]));

    [Fact]
    public void Unknown_syscall_set_is_refused_with_its_name()
    {
        var ex = Assert.Throws<ArgumentException>(() => OverheadCommand.ParseSets("none,some"));
        Assert.Contains("unknown syscall set 'some'", ex.Message);
    }
}
