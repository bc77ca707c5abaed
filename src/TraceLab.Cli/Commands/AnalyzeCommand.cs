using System.CommandLine;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Charts;
using TraceLab.Cli.CommandLine;
using TraceLab.Formats.Registry;
using TraceLab.Pipeline;
using TraceLab.Workloads;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab analyze TRACE`: re-analyzes an existing trace; uses workload.json beside it when present.
/// </summary>
public sealed class AnalyzeCommand(IAnsiConsole console)
{
    /// <param name="TraceFile">Any format the trace format registry reads.</param>
    public sealed record Settings(string TraceFile)
    {
        /// <summary>
        /// Where the reports go; null: beside the trace (replacing its reports needs <see cref="Force"/>).
        /// </summary>
        public string? Out { get; init; }
        public bool Force { get; init; }
        public int? Pid { get; init; }
        /// <summary>Processes the report leaves out (a load generator, an agent), their cost said once.</summary>
        public IReadOnlyList<int> ExcludePids { get; init; } = [];
        public AnalysisSelection Analyses { get; init; } = AnalysisSelection.All;
        /// <summary>Analyze the intact part of a damaged trace; the report's warnings say what was skipped.</summary>
        public bool Salvage { get; init; }
        /// <summary>trace.dat: the buffer (instance) to read; null: the reader's default.</summary>
        public string? Buffer { get; init; }
        /// <summary>
        /// The window report.html's thread timeline shows (null: <see cref="TimelineWindow.Default"/>).
        /// </summary>
        public TimelineWindow? Timeline { get; init; }
        /// <summary>Analysis threads besides the reader (null: the default for this machine).</summary>
        public int? AnalysisThreads { get; init; }
        /// <summary>Without a target: the top-ranked processes that get a detailed section.</summary>
        public int Top { get; init; } = Reporting.SystemOverview.DefaultTop;
        /// <summary>Skip the charts (report.html without them, no chart-* files): the fastest analysis.</summary>
        public bool NoCharts { get; init; }
        /// <summary>A file of the user's stack tags (`--wait-tags`); null: the shipped tags alone.</summary>
        public string? WaitTags { get; init; }
        /// <summary>C++ names in stacks as linked (`--no-demangle`).</summary>
        public bool NoDemangle { get; init; }
    }

    private readonly IAnsiConsole _console = console;

    public static Command Create(IAnsiConsole console)
    {
        var trace = SharedOptions.ExistingTraceFile($"trace file ({string.Join(", ", TraceFiles.Formats.Names)})");
        var outDir = SharedOptions.Out("where report.json / report.md go (default: beside the trace)");
        var force = SharedOptions.Force("replace existing reports");
        var pid = SharedOptions.Pid(
            "process to report on (default: the workload's, from its markers or workload.json)");
        var exclude = SharedOptions.ExcludePids();
        var analysis = SharedOptions.Analysis();
        var salvage = SharedOptions.Salvage(
            "analyze a truncated or corrupt trace up to the damage on each CPU; a warning says what was skipped");
        var buffer = SharedOptions.Buffer();
        var timeline = SharedOptions.TimelineWindow();
        var threads = SharedOptions.AnalysisThreads();
        var top = SharedOptions.Top();
        var noCharts = SharedOptions.NoCharts();
        var waitTags = SharedOptions.WaitTags();
        var noDemangle = SharedOptions.NoDemangle();
        var command = new Command("analyze", "analyze an existing trace file")
        {
            trace, outDir, force, pid, exclude, analysis, salvage, buffer, timeline, threads, top, noCharts, waitTags,
            noDemangle,
        };
        CommandActions.Set(command, r => new AnalyzeCommand(console).Run(new Settings(r.GetValue(trace)!)
        {
            Out = r.GetValue(outDir),
            Force = r.GetValue(force),
            Pid = r.GetValue(pid),
            ExcludePids = SharedOptions.PidList(r.GetValue(exclude)),
            Analyses = r.GetValue(analysis),
            Salvage = r.GetValue(salvage),
            Buffer = r.GetValue(buffer),
            Timeline = r.GetValue(timeline),
            AnalysisThreads = r.GetValue(threads),
            Top = r.GetValue(top),
            NoCharts = r.GetValue(noCharts),
            WaitTags = r.GetValue(waitTags),
            NoDemangle = r.GetValue(noDemangle),
        }));
        return command;
    }

    public int Run(Settings s)
    {
        var traceFile = Path.GetFullPath(s.TraceFile);
        InputFile.Check(traceFile);
        var waitTags = SharedOptions.WaitTagsFrom(s.WaitTags);
        var beside = Path.Combine(Path.GetDirectoryName(traceFile)!, "workload.json");
        var workload = File.Exists(beside) ? WorkloadResult.Parse(File.ReadAllText(beside), beside) : null;

        // Default: next to the trace, which already holds a report from the capture, so replacing needs --force.
        var output = OutputDirectory.Prepare(s.Out ?? Path.GetDirectoryName(traceFile)!, "", s.Force || s.Out is null);
        if (s.Out is null && !s.Force && File.Exists(output.File("report.json")))
            throw new UsageException(
                $"{output.File("report.json")} already exists: add --force to replace it, or --out DIR");

        // The drawing library loads while the trace is read, not after.
        if (!s.NoCharts) BackgroundWork.Run(ReportChartImages.WarmUp);
        StageTimes.Mark("command line");
        // The charts are drawn on another thread from when their data is built, while the sections are.
        Task<IReadOnlyList<ChartImage>>? drawing = null;
        var analysis = TraceAnalysis.Run(new AnalysisRequest(traceFile)
        {
            Workload = workload,
            Pid = s.Pid,
            Analyses = s.Analyses,
            Read = new TraceReadOptions { Salvage = s.Salvage, BufferName = s.Buffer },
            Timeline = s.Timeline ?? TimelineWindow.Default,
            FocusTimeline = s.Timeline is null,
            AnalysisThreads = s.AnalysisThreads,
            TopProcesses = s.Top,
            ChartsReady = s.NoCharts ? null : charts => drawing = ReportFiles.StartCharts(charts),
            // A system report's focused timeline is read again while the terminal and the other files are made.
            RecordTimelineBeside = BackgroundWork.RunOnOwnThread,
            ExcludePids = s.ExcludePids,
            WaitTags = waitTags,
            Demangle = !s.NoDemangle,
        });
        var report = analysis.Report;
        // The terminal report is drawn while the files are written (both only read the finished report); only
        // this thread writes to the console, so the terminal shows what it showed when the files came first.
        // Their own thread, not the thread pool's: with two CPUs its two threads are drawing the charts, and the files
        // waited for them to finish before they started (docs/performance.md#html-before-charts).
        var writing = BackgroundWork.RunOnOwnThread(_ =>
            ReportFiles.Write(output, report, analysis.TimelineRecording, charts: !s.NoCharts, drawing: drawing));
        try
        {
            using (StageTimes.Begin("terminal")) TerminalReport.Render(_console, report);
        }
        catch
        {
            // The files are finished (or have failed) before the error ends the run.
            Task.WaitAny(writing);
            throw;
        }
        // A failed file ends the run with its own error (one line), not an AggregateException.
        var written = writing.GetAwaiter().GetResult();
        if (written.ChartsMissing is { } why) _console.MarkupLine($"[yellow]{Markup.Escape(why)}[/]");
        _console.MarkupLine($"[bold]Files[/] {Markup.Escape(output.Path)}: {string.Join(", ", written.Files)}");
        return ExitCodes.Ok;
    }
}
