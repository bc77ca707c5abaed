using TraceLab.Analyzers;
using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Parallel;
using TraceLab.Analyzers.Waits;

namespace TraceLab.Tests.Analyzers.Parallel;

public sealed class AnalysisPlanTests
{
    private static readonly AnalysisCatalog Catalog = Analyses.Catalog;

    /// <summary>Every analysis `--analysis all` selects (the timeline is asked for separately).</summary>
    private static readonly AnalysisSelection Everything = Catalog.Everything;

    private static readonly AnalysisSelection Timeline = Catalog.Of(Analyses.Timeline);

    private static readonly AnalysisDefinition[] WithAnalyzerWork =
    [
        Analyses.Kernel, Analyses.Convoys, WaitClassAnalyzer.Analysis, Analyses.Wakeups, Analyses.Smp,
        Analyses.WaitGraph, FindingEvidenceAnalyzer.Analysis,
    ];

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(6)]
    public void Each_selected_analyzer_is_in_exactly_one_group_and_no_group_is_empty(int threads)
    {
        var groups = AnalysisPlan.Partition(Catalog, Everything, threads);
        Assert.InRange(groups.Count, 1, threads);
        foreach (var a in WithAnalyzerWork) Assert.Single(groups, g => g.HasFlag(Catalog.Of(a)));
        Assert.All(groups, g => Assert.NotEqual(AnalysisSelection.None, g & ~AnalysisSelection.Threads));
        // The threads analysis costs nothing and rides with the first pass.
        Assert.True(groups[0].HasFlag(AnalysisSelection.Threads));
    }

    [Fact]
    public void Two_threads_split_all_analyzers_evenly_by_cost()
    {
        var groups = AnalysisPlan.Partition(Catalog, Everything, 2);
        Assert.Equal(2, groups.Count);
        // Costs 22 + 18 + 14 + 12 + 12 + 11 + 10 = 99: longest-first gives {convoys 22, smp 12, wakeups 11} = 45 and
        // {waitgraph 18, kernel 14, findings 12, waits 10} = 54 — the convoy analyzer never shares with the wait-for
        // graph.
        Assert.DoesNotContain(groups,
            g => g.HasFlag(AnalysisSelection.Convoys) && g.HasFlag(AnalysisSelection.WaitGraph));
    }

    [Fact]
    public void The_timeline_stays_with_the_convoy_and_wakeup_analyzers_it_draws_from()
    {
        foreach (var threads in new[] { 1, 2, 4, 6 })
        {
            var groups = AnalysisPlan.Partition(Catalog, Everything | Timeline, threads);
            var g = Assert.Single(groups, x => x.HasFlag(Timeline));
            Assert.True(g.HasFlag(AnalysisSelection.Convoys) && g.HasFlag(AnalysisSelection.Wakeups));
        }
        // Without them it is a pass of its own (or shares one) all the same.
        Assert.Single(
            AnalysisPlan.Partition(Catalog, AnalysisSelection.Kernel | Timeline, 6), x => x.HasFlag(Timeline));
    }

    [Fact]
    public void More_threads_than_analyzers_gives_one_group_per_analyzer()
    {
        Assert.Equal(2, AnalysisPlan.Partition(Catalog, AnalysisSelection.Kernel | AnalysisSelection.Smp, 6).Count);
        var accountingOnly = Assert.Single(AnalysisPlan.Partition(Catalog, AnalysisSelection.Threads, 6));
        Assert.Equal(AnalysisSelection.Threads, accountingOnly);
    }
}
