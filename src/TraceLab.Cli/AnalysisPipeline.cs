using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Cli;

/// <summary>One streaming pass over a trace through the analyzers, then the report model.</summary>
public static class AnalysisPipeline
{
    public static RunReport Analyze(string traceFile, WorkloadResult? workload, RunSection? run, bool partial, int? pid,
        CancellationToken cancellationToken = default)
    {
        using var reader = TraceFiles.Open(traceFile);
        var accounting = new ThreadAccounting();
        reader.Read(accounting, cancellationToken);
        accounting.Complete();
        return ReportBuilder.Build(reader.Info, reader.Threads, accounting, workload, run, partial, pid);
    }
}
