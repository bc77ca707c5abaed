using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// The one registration (<see cref="AnalysisReports.All"/>) is what `--analysis`, the session and report.json read,
/// and a definition's selection flag needs no hand-written member.
/// </summary>
public sealed class AnalysisRegistrationTests
{
    [Fact]
    public void Every_registered_analysis_has_a_flag_of_its_own_and_names_come_in_report_order()
    {
        var analyses = AnalysisReports.All.Select(r => r.Analysis).ToList();
        Assert.Equal(analyses.Count, analyses.Select(a => a.Kind).Distinct().Count());
        Assert.All(analyses, a => Assert.Equal(1, analyses.Count(b => b.Kind.HasFlag(a.Kind))));

        var everything = AnalysisReports.Parse(string.Join(",", analyses.Select(a => a.Name).Reverse()));
        Assert.Equal(AnalysisReports.Select(AnalysisKind.All), everything);
        Assert.Equal(analyses.Select(a => a.Name), AnalysisReports.Format(everything));
        Assert.Equal(analyses.Select(a => a.Name).Append("all"), AnalysisReports.Names);
        Assert.Equal(["convoys", "smp"], AnalysisReports.Format(AnalysisReports.Parse("smp,convoys")));
    }

    [Fact]
    public void A_new_definition_takes_a_free_flag_and_its_analyzer_runs_when_selected()
    {
        var probe = new AnalysisDefinition("registration-probe", 1, _ => new CountingAnalyzer());
        Assert.All(AnalysisReports.All, r => Assert.False(r.Analysis.Kind.HasFlag(probe.Kind)));
        Assert.Equal(probe.Kind, AnalysisKinds.Parse("registration-probe", [probe]));
        Assert.Throws<ArgumentException>(() => new AnalysisDefinition("Registration-Probe", 1, null));

        var session = new AnalysisSession(AnalysisKind.Threads | probe.Kind);
        session.OnEvent(KernelEvent.Fork(0, 0, 100, 101));
        session.Complete();
        var analyzer = Assert.IsType<CountingAnalyzer>(session.AnalyzerOf(probe));
        Assert.Equal(1, analyzer.Events);
        Assert.Null(session.AnalyzerOf(Analyses.Convoys));
        // Selections made through the registration leave out what it does not list.
        Assert.False(AnalysisReports.Select(AnalysisKind.All).Includes(probe));
    }

    private sealed class CountingAnalyzer : IKernelAnalyzer
    {
        public int Events { get; private set; }
        public void OnEvent(in KernelEvent e) => Events++;
        public void OnRegionBegin() { }
        public void Complete(long end) { }
    }
}
