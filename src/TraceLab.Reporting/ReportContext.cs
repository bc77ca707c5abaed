using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Workloads;

namespace TraceLab.Reporting;

/// <summary>What a section is built from: the finished session, the reported threads and their names.</summary>
/// <param name="Session">The finished analyses.</param>
/// <param name="Tids">The threads the report covers (the workload's process).</param>
/// <param name="Names">Thread names from the trace.</param>
/// <param name="Workload">The workload's own result, when known.</param>
/// <param name="RegionNs">The measured region's length.</param>
public sealed record ReportContext(
    AnalysisSession Session, IReadOnlyList<int> Tids, ThreadTable Names, WorkloadResult? Workload, long RegionNs)
{
    public ThreadAccounting Accounting => Session.Accounting;

    /// <summary>
    /// The report being built, with the sections of the registrations before this one already set (null while the
    /// warnings are gathered): what a post-pass such as the findings reads.
    /// </summary>
    public RunReport? Report { get; init; }
}
