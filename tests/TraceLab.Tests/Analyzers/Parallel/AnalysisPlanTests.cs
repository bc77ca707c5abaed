using TraceLab.Analyzers;
using TraceLab.Analyzers.Parallel;

namespace TraceLab.Tests.Analyzers.Parallel;

public sealed class AnalysisPlanTests
{
    private static readonly AnalysisKind[] Analyzers =
        [AnalysisKind.Kernel, AnalysisKind.Convoys, AnalysisKind.Wakeups, AnalysisKind.Smp, AnalysisKind.WaitGraph];

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(6)]
    public void Each_selected_analyzer_is_in_exactly_one_group_and_no_group_is_empty(int threads)
    {
        var groups = AnalysisPlan.Partition(AnalysisKind.All, timeline: false, threads);
        Assert.InRange(groups.Count, 1, threads);
        foreach (var k in Analyzers) Assert.Single(groups, g => g.Kinds.HasFlag(k));
        Assert.All(groups, g => Assert.NotEqual(AnalysisKind.None, g.Kinds & ~AnalysisKind.Threads));
    }

    [Fact]
    public void Two_threads_split_all_analyzers_evenly_by_cost()
    {
        var groups = AnalysisPlan.Partition(AnalysisKind.All, timeline: false, 2);
        Assert.Equal(2, groups.Count);
        // Costs 22 + 18 + 14 + 12 + 11 = 77: longest-first gives {convoys 22, smp 12, wakeups 11} = 45 and
        // {waitgraph 18, kernel 14} = 32 — the convoy analyzer never shares with the wait-for graph.
        Assert.DoesNotContain(groups,
            g => g.Kinds.HasFlag(AnalysisKind.Convoys) && g.Kinds.HasFlag(AnalysisKind.WaitGraph));
    }

    [Fact]
    public void The_timeline_stays_with_the_convoy_and_wakeup_analyzers_it_draws_from()
    {
        foreach (var threads in new[] { 1, 2, 4, 6 })
        {
            var groups = AnalysisPlan.Partition(AnalysisKind.All, timeline: true, threads);
            var g = Assert.Single(groups, x => x.Timeline);
            Assert.True(g.Kinds.HasFlag(AnalysisKind.Convoys) && g.Kinds.HasFlag(AnalysisKind.Wakeups));
        }
    }

    [Fact]
    public void More_threads_than_analyzers_gives_one_group_per_analyzer()
    {
        Assert.Equal(2, AnalysisPlan.Partition(AnalysisKind.Kernel | AnalysisKind.Smp, timeline: false, 6).Count);
        var accountingOnly = Assert.Single(AnalysisPlan.Partition(AnalysisKind.Threads, timeline: false, 6));
        Assert.Equal(new PassPlan(AnalysisKind.Threads, Timeline: false), accountingOnly);
    }
}
