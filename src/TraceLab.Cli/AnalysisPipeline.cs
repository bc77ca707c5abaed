using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Cli;

/// <summary>One streaming pass over a trace through the analyzers, then the report model.</summary>
public static class AnalysisPipeline
{
    public static RunReport Analyze(string traceFile, WorkloadResult? workload, RunSection? run, bool partial, int? pid,
        AnalysisKind analyses = AnalysisKind.All, bool salvage = false, CancellationToken cancellationToken = default)
    {
        using var reader = TraceFiles.Open(traceFile, salvage);
        var session = new AnalysisSession(analyses);
        reader.Read(session, cancellationToken);
        session.Complete();
        return ReportBuilder.Build(reader.Info, reader.Threads, session, workload, run, partial, pid);
    }
}
