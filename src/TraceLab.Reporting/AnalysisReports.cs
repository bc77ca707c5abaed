using TraceLab.Reporting.Sections;

namespace TraceLab.Reporting;

/// <summary>
/// Every analysis's report registration, in report order (the order of <see cref="Analyzers.Analyses.All"/>):
/// ReportBuilder, report.json, report.md, report.html and the terminal read this list.
/// </summary>
public static class AnalysisReports
{
    public static readonly ThreadsReport Threads = new();
    public static readonly KernelReport Kernel = new();
    public static readonly ConvoyReport Convoys = new();
    public static readonly WakeupReport Wakeups = new();
    public static readonly SmpReport Smp = new();
    public static readonly WaitGraphReport WaitGraph = new();
    public static readonly Findings.FindingsReport Findings = new();

    public static readonly IReadOnlyList<IAnalysisReport> All = [Threads, Kernel, Convoys, Wakeups, Smp, WaitGraph, Findings];
}
