using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// The warning that a thread's traced run time disagrees with its getrusage (docs/metrics.md#rusage-agreement), on
/// hand-made reports whose figures are worked out here by hand.
/// </summary>
public sealed class RusageAgreementTests
{
    private static readonly LatencySection NoLatency = new();

    private static ThreadSection Thread(int tid, long runMs, long? userMs, long systemMs = 0) => new()
    {
        Tid = tid,
        Name = "w",
        RunNs = runMs * 1_000_000,
        ReadyLatency = NoLatency,
        Workload = userMs is null ? null
            : new WorkloadThreadSection { UserNs = userMs.Value * 1_000_000, SystemNs = systemMs * 1_000_000 },
    };

    private static RunReport Report(params ThreadSection[] threads) => new()
    {
        Capture = new CaptureSection { Backend = "tracefs", TraceFile = "x" },
        Region = new RegionSection { Source = "markers" },
        Threads = [.. threads],
    };

    [Fact]
    public void Threads_within_the_tolerance_or_under_the_floor_give_no_warning()
    {
        // 85 of 100 ms: 15 % below, inside 20 %; 5 of 12 ms: 58 % below but 7 ms, under the 10 ms floor;
        // the main thread has no getrusage of its own (not in workload.json) and is not compared.
        var report = Report(Thread(1, 1000, null), Thread(2, 85, 60, 40), Thread(3, 5, 12));
        Assert.Empty(RusageAgreement.Warnings(report));
    }

    [Fact]
    public void A_thread_traced_below_its_getrusage_is_named_with_both_figures_and_the_likely_cause()
    {
        // The case: another tracer's probes on the scheduler events; workers at 76 % of getrusage.
        var report = Report(Thread(2, 76, 70, 30), Thread(3, 95, 100), Thread(4, 50, 80));
        var warning = Assert.Single(RusageAgreement.Warnings(report));
        Assert.Contains("2 of 3 workload threads", warning, StringComparison.Ordinal);
        // Largest difference first: tid 4 (30 ms), then tid 2 (24 ms); tid 3 (5 %) is not named.
        Assert.Contains("tid 4 traced 50.0 ms vs getrusage 80.0 ms (0.63), tid 2 traced 76.0 ms vs getrusage " +
            "100.0 ms (0.76);", warning, StringComparison.Ordinal);
        Assert.DoesNotContain("tid 3", warning, StringComparison.Ordinal);
        Assert.Contains("other tracing", warning, StringComparison.Ordinal);
        Assert.Contains("20 % and 10 ms (docs/metrics.md#rusage-agreement)", warning, StringComparison.Ordinal);
    }

    [Fact]
    public void A_thread_traced_above_its_getrusage_points_at_lost_switches()
    {
        var warning = Assert.Single(RusageAgreement.Warnings(Report(Thread(2, 130, 100))));
        Assert.Contains("tid 2 traced 130.0 ms vs getrusage 100.0 ms (1.30)", warning, StringComparison.Ordinal);
        Assert.Contains("switches that were lost", warning, StringComparison.Ordinal);
    }

    [Fact]
    public void A_programs_tree_is_compared_with_its_getrusage()
    {
        var report = Report(Thread(2, 300, null));
        report.Process = new ProcessSection { Pid = 2, TracedRunNs = 300_000_000 };
        report.Run = new RunSection
        {
            Workload = "sh",
            Parameters = [],
            Rusage = new ProcessTimes { UserNs = 350_000_000, SystemNs = 50_000_000 },
        };
        var warning = Assert.Single(RusageAgreement.Warnings(report));
        Assert.Contains("program's tree", warning, StringComparison.Ordinal);
        Assert.Contains("traced 300.0 ms vs getrusage 400.0 ms (0.75)", warning, StringComparison.Ordinal);

        report.Run.Rusage!.UserNs = 280_000_000;
        Assert.Empty(RusageAgreement.Warnings(report));
    }

    /// <summary>The rule itself at its edges, against the definition's arithmetic.</summary>
    [Theory]
    [InlineData(80_000_000, 100_000_000, false)]   // exactly 20 %: not more than the tolerance
    [InlineData(79_999_999, 100_000_000, true)]
    [InlineData(0, 10_000_000, false)]             // 10 ms: not more than the floor
    [InlineData(0, 10_000_001, true)]
    [InlineData(200_000_000, 100_000_000, true)]
    public void Disagree_needs_both_the_share_and_the_floor(long traced, long rusage, bool expected)
    {
        var difference = Math.Abs(traced - rusage);
        Assert.Equal(difference > 10_000_000 && difference > 0.2 * rusage, RusageAgreement.Disagree(traced, rusage));
        Assert.Equal(expected, RusageAgreement.Disagree(traced, rusage));
    }
}
