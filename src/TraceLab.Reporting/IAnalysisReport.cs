using System.Text.Json.Serialization.Metadata;
using TraceLab.Analyzers;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting;

/// <summary>
/// The report half of one analysis's registration (<see cref="AnalysisReports.All"/>): its section of report.json
/// and how that section reads in report.md, report.html and on the terminal. The analysis half (name, selection flag,
/// cost, factory) is <see cref="Analysis"/>.
/// </summary>
public interface IAnalysisReport
{
    AnalysisDefinition Analysis { get; }

    /// <summary>The section's property in report.json; null when it is in RunReport's own fields.</summary>
    string? JsonName { get; }

    /// <summary>The section's type in report.json (to read it back); null with <see cref="JsonName"/>.</summary>
    Type? SectionType { get; }

    /// <summary>
    /// How the section is written and read: its generated metadata in <see cref="ReportJsonContext"/>; null with
    /// <see cref="JsonName"/>.
    /// </summary>
    JsonTypeInfo? SectionJson { get; }

    /// <summary>Builds the section from the finished analysis; null when the analysis did not run.</summary>
    object? Build(ReportContext context);

    /// <summary>Report warnings the analysis adds (shown with the others, in registration order).</summary>
    IEnumerable<string> Warnings(ReportContext context) => [];

    /// <summary>The section's tables and notes, built once for every renderer; null when there is none.</summary>
    IReadOnlyList<ReportBlock>? View(RunReport report);

    /// <summary>
    /// Rendered first, right after the run summary and before any table, instead of in registration order (findings).
    /// Its section is still built in registration order, so it can read the sections registered before it.
    /// </summary>
    bool OpensReport => false;
}

/// <summary>
/// An analysis whose report.json section is a <typeparamref name="TSection"/>, built from its
/// <typeparamref name="TAnalyzer"/>.
/// </summary>
public abstract class AnalysisReport<TAnalyzer, TSection> : IAnalysisReport
    where TAnalyzer : class, IKernelAnalyzer
    where TSection : class
{
    protected AnalysisReport(AnalysisDefinition analysis, string jsonName)
    {
        Analysis = analysis;
        JsonName = jsonName;
    }

    private JsonTypeInfo<TSection>? _sectionJson;

    public AnalysisDefinition Analysis { get; }
    public string JsonName { get; }
    public Type SectionType => typeof(TSection);

    /// <summary>
    /// Taken from <see cref="ReportJsonContext"/> when first asked (report.json written or read), not when the
    /// registration is made: every command builds the registrations for its options' help, and configuring the
    /// sections' metadata was a third of `tracelab --version` (~10 ms of faults and reflection data).
    /// ReportJsonContextTests checks that every section has its metadata.
    /// </summary>
    public JsonTypeInfo<TSection> SectionJson => _sectionJson ??= ReportJsonContext.Section<TSection>();
    JsonTypeInfo IAnalysisReport.SectionJson => SectionJson;

    public object? Build(ReportContext context) =>
        context.Session.AnalyzerOf(Analysis) is TAnalyzer analyzer ? Build(analyzer, context) : null;

    public IEnumerable<string> Warnings(ReportContext context) =>
        context.Session.AnalyzerOf(Analysis) is TAnalyzer analyzer ? Warnings(analyzer) : [];

    public IReadOnlyList<ReportBlock>? View(RunReport report) =>
        report.SectionOf(this) is TSection section ? View(section) : null;

    protected abstract TSection Build(TAnalyzer analyzer, ReportContext context);

    protected virtual IEnumerable<string> Warnings(TAnalyzer analyzer) => [];

    protected abstract IReadOnlyList<ReportBlock> View(TSection section);
}
