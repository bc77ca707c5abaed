using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Core;
using TraceLab.Reporting;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// The analyses are one immutable catalog (<see cref="Analyses.Catalog"/>, bits = positions) whose report halves
/// <see cref="AnalysisReports.All"/> lists in the same order; `--analysis`, the session and report.json read them,
/// and making a definition registers nothing.
/// </summary>
public sealed class AnalysisRegistrationTests
{
    [Fact]
    public void The_report_list_is_the_catalog_in_order_and_only_the_timeline_has_no_report()
    {
        var reported = AnalysisReports.All.Select(r => r.Analysis).ToList();
        Assert.Equal(reported, Analyses.Catalog.All.Where(a => !a.OnRequest));
        Assert.Equal([Analyses.Timeline], Analyses.Catalog.All.Where(a => a.OnRequest));
        Assert.Equal(reported.Count, reported.Select(a => Analyses.Catalog.Of(a)).Distinct().Count());

        var everything = AnalysisReports.Parse(string.Join(",", reported.Select(a => a.Name).Reverse()));
        Assert.Equal(Analyses.Catalog.Everything, everything);
        Assert.Equal(AnalysisReports.Parse("all"), everything);
        Assert.Equal(reported.Select(a => a.Name), AnalysisReports.Format(everything));
        Assert.Equal(reported.Select(a => a.Name).Append("all"), AnalysisReports.Names);
        Assert.Equal(["convoys", "smp"], AnalysisReports.Format(AnalysisReports.Parse("smp,convoys")));
        var unknown = Assert.Throws<ArgumentException>(() => AnalysisReports.Parse("timeline"));
        Assert.Contains("unknown analysis 'timeline'", unknown.Message);
    }

    [Fact]
    public void A_selection_means_the_same_whatever_else_the_process_has_made()
    {
        var before = AnalysisReports.Parse("waits,findings");
        _ = new AnalysisDefinition("made-but-not-listed", 1, _ => new CountingAnalyzer());
        _ = new AnalysisCatalog([new AnalysisDefinition("another", 1, _ => new CountingAnalyzer()), Analyses.Kernel]);
        Assert.Equal(before, AnalysisReports.Parse("waits,findings"));
        Assert.Equal("waits,findings", before.ToString());
    }

    [Fact]
    public void A_catalog_of_its_own_runs_its_analyses_and_no_other()
    {
        var probe = new AnalysisDefinition("registration-probe", 1, _ => new CountingAnalyzer());
        var catalog = new AnalysisCatalog([Analyses.Threads, probe]);
        Assert.Equal(catalog.Of(probe), catalog.Parse("registration-probe"));
        Assert.Throws<ArgumentException>(() => new AnalysisCatalog([probe, new AnalysisDefinition(
            "Registration-Probe", 1, _ => new CountingAnalyzer())]));
        Assert.Throws<ArgumentException>(() => catalog.Of(Analyses.Convoys));
        // An observer must come after what it observes (it is made after it in a pass).
        Assert.Throws<ArgumentException>(() => new AnalysisCatalog([Analyses.Timeline, Analyses.Convoys]));

        using var session = new AnalysisSession(AnalysisSelection.All, catalog: catalog);
        session.OnEvent(KernelEvent.Fork(0, 0, 100, 101));
        session.Complete();
        var analyzer = Assert.IsType<CountingAnalyzer>(session.AnalyzerOf(probe));
        Assert.Equal(1, analyzer.Events);
        Assert.IsType<ThreadsAnalyzer>(session.AnalyzerOf(Analyses.Threads));
        Assert.Null(session.AnalyzerOf(Analyses.Convoys));
    }

    [Fact]
    public void The_timeline_runs_when_a_window_is_asked_for_and_only_then()
    {
        using (var without = new AnalysisSession(AnalysisSelection.All))
        {
            Assert.Null(without.Timeline);
            Assert.False(without.Selection.HasFlag(Analyses.Catalog.Of(Analyses.Timeline)));
        }
        using var with = new AnalysisSession(AnalysisSelection.Threads,
            new AnalysisOptions(new TimelineWindow(0, 1_000_000)), analysisThreads: 2);
        Assert.NotNull(with.Timeline);
        Assert.Equal(AnalysisSelection.Threads | Analyses.Catalog.Of(Analyses.Timeline), with.Selection);
    }

    private sealed class CountingAnalyzer : IKernelAnalyzer
    {
        public int Events { get; private set; }
        public void OnEvent(in KernelEvent e) => Events++;
        public void OnRegionBegin() { }
        public void Complete(long end) { }
    }
}
