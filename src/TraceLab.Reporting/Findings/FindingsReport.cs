using System.Text.Json.Serialization.Metadata;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Findings;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Findings;

/// <summary>
/// The "findings" analysis in the report: registered last, so its rules (<see cref="FindingEngine"/>) read every
/// other section, and rendered first (<see cref="OpensReport"/>). report.json "findings" is the ranked list.
/// </summary>
public sealed class FindingsReport : IAnalysisReport
{
    public AnalysisDefinition Analysis => FindingEvidenceAnalyzer.Analysis;
    public string JsonName => "findings";
    public Type SectionType => typeof(List<FindingSection>);
    public JsonTypeInfo SectionJson => ReportJsonContext.Default.ListFindingSection;
    public bool OpensReport => true;

    public object? Build(ReportContext context) =>
        context.Report is { } report && context.Session.AnalyzerOf(Analysis) is FindingEvidenceAnalyzer evidence
            ? FindingEngine.Run(report, evidence.Result())
            : null;

    public IReadOnlyList<ReportBlock>? View(RunReport report) =>
        report.Findings is { } findings ? FindingsMarkdown.View(findings, report.Capture.SwitchEvents > 0) : null;
}
