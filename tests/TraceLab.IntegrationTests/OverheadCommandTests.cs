using TraceLab.Capture.Linux;
using TraceLab.Cli.Commands;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.IntegrationTests;

/// <summary>`tracelab overhead`: real untraced and traced runs; the slowdown is computed from the rounds' own elapsed times.</summary>
public sealed class OverheadCommandTests
{
    [TracingFact]
    public async Task Slowdown_is_traced_over_untraced_elapsed_per_round_for_each_syscall_set()
    {
        var cmd = new OverheadCommand(Capture.QuietConsole());
        var results = await cmd.MeasureAsync(new OverheadCommand.Settings("timemutex", "mutex",
            new Dictionary<string, string> { ["iterations"] = "2000" }, Repeat: 3, [SyscallSet.None, SyscallSet.Lock], BufferKb: 16 * 1024));

        Assert.Equal([SyscallSet.None, SyscallSet.Lock], results.Select(r => r.Set));
        foreach (var r in results)
        {
            Assert.Equal(3, r.Slowdowns.Length);
            Assert.All(r.UntracedNs.Concat(r.TracedNs), ns => Assert.True(ns > 0));
            for (var i = 0; i < 3; i++) Assert.Equal((double)r.TracedNs[i] / r.UntracedNs[i] - 1, r.Slowdowns[i], 12);
            Assert.Equal(r.Slowdowns.Order().ElementAt(1), r.Median, 12);
        }

        // Both sets share the untraced run of each round (interleaved rounds).
        Assert.Equal(results[0].UntracedNs, results[1].UntracedNs);
    }

    [Fact]
    public void Median_of_an_even_count_is_the_mean_of_the_middle_two() =>
        Assert.Equal(2.5, OverheadCommand.Median([4, 1, 3, 2]));

    [Fact]
    public void Unknown_syscall_set_is_a_usage_error() =>
        Assert.Contains("unknown syscall set", Assert.Throws<TraceLab.Cli.UsageException>(() => OverheadCommand.ParseSets("none,some")).Message);
}
