using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Workloads;

namespace TraceLab.Cli.Commands;

/// <summary>`tracelab analyze TRACE`: re-analyzes an existing trace; uses workload.json beside it when present.</summary>
public sealed class AnalyzeCommand
{
    private readonly IAnsiConsole _console;

    public AnalyzeCommand(IAnsiConsole console) => _console = console;

    /// <param name="salvage">Analyze the intact part of a damaged trace; the report's warnings say what was skipped.</param>
    /// <param name="analysisThreads">Analysis threads besides the reader (null: the default for this machine).</param>
    /// <param name="timeline">The window report.html's thread timeline shows (default <see cref="TimelineWindow.Default"/>).</param>
    public int Run(string traceFile, string? outDir, bool force, int? pid, AnalysisKind analyses = AnalysisKind.All, bool salvage = false,
        TimelineWindow? timeline = null, int? analysisThreads = null)
    {
        traceFile = Path.GetFullPath(traceFile);
        if (!File.Exists(traceFile)) throw new UsageException($"{traceFile}: no such file");
        var beside = Path.Combine(Path.GetDirectoryName(traceFile)!, "workload.json");
        var workload = File.Exists(beside) ? WorkloadResult.Parse(File.ReadAllText(beside), beside) : null;

        // Default: next to the trace, which already holds a report from the capture, so replacing needs --force.
        var output = OutputDirectory.Prepare(outDir ?? Path.GetDirectoryName(traceFile)!, "", force || outDir is null);
        if (outDir is null && !force && File.Exists(output.File("report.json")))
            throw new UsageException($"{output.File("report.json")} already exists: add --force to replace it, or --out DIR");

        var (report, recorded) = AnalysisPipeline.AnalyzeWithTimeline(traceFile, workload, run: null, partial: false, pid, analyses, salvage,
            timeline ?? TimelineWindow.Default, analysisThreads: analysisThreads);
        ReportFiles.Write(output, report, recorded);
        TerminalReport.Render(_console, report);
        _console.MarkupLine($"[bold]Files[/] {Markup.Escape(output.Path)}: {string.Join(", ", ReportFiles.Names)}");
        return ExitCodes.Ok;
    }
}
