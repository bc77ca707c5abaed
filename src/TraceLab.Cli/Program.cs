using System.CommandLine;
using Spectre.Console;
using TraceLab.Cli;
using TraceLab.Cli.CommandLine;
using TraceLab.Cli.Commands;
using TraceLab.Pipeline;

// Every way out of Main waits for the work started on other threads (BackgroundWork): native drawing code still
// running while the process exits crashes it.
try
{
    // The ETW backend's guard process (TraceLab started again by itself): no console output, no parser.
    if (EtwGuardCommand.Matches(args)) return EtwGuardCommand.Run(args);

    // TRACELAB_STAGES=1: where a run's time goes, stage by stage, on stderr (docs/performance.md#stages).
    StageTimes.StartOfMain();
    // One trace analyzed, then the process ends: its heap is not collected while it allocates what that takes.
    if (args is ["analyze", ..]) StageTimes.NoGcRegion(AnalysisHeap.TryReserve() ? AnalysisHeap.Bytes : 0);
    // The heap in 2 MiB pages where Linux gives them on request and they are measured cheaper here: a fraction of the
    // page faults of writing it, but on VMs that hand freed memory back to their host a huge page can cost more.
    var (advice, why) = HugePageHeap.Choose(args.Length > 0 ? args[0] : null);
    StageTimes.HugePages(advice, why);
    // A closed terminal makes writes fail: dropped, so long runs still stop cleanly and write their files.
    HangUpTolerantWriter.Install();
    // Output redirected to a file or a pipe gets plain text (no escape sequences), as perf and trace-cmd write it.
    var console = Console.IsOutputRedirected
        ? AnsiConsole.Create(new AnsiConsoleSettings
        {
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
        })
        : AnsiConsole.Console;
    // Redirected output has no width (80 columns by default, too few for the per-thread table): the 160 of the rule.
    TerminalWidth.Limit(console, Console.IsOutputRedirected);
    // `trace -- PROGRAM`, `trace --pid`, `trace --system`: the program's arguments must never meet TraceLab's parser.
    if (TraceTargetCommandLine.Matches(args)) return await TraceTargetCommandLine.RunAsync(args, console);

    var root = new RootCommand("TraceLab: see, in a kernel trace, why threads that contend for a lock run slowly")
    {
        TraceCommand.Create(console),
        AnalyzeCommand.Create(console),
        ScenariosCommand.Create(console),
        ExportCommand.Create(console),
        BenchCommand.Create(console),
        OverheadCommand.Create(console),
        SweepCommand.Create(console),
        SweepsCommand.Create(console),
        ClaimsCommand.Create(console),
    };

    var parse = root.Parse(args);
    if (parse.Errors.Count > 0)
        return CommandActions.Fail($"{parse.Errors[0].Message} (see tracelab --help)", ExitCodes.Usage);

    // TraceLab handles Ctrl-C itself (stop the workload, keep the partial trace, still write the report): the
    // parser's own handler would end the process after a fixed timeout, mid-write.
    return await parse.InvokeAsync(new InvocationConfiguration
    {
        ProcessTerminationTimeout = null,
        EnableDefaultExceptionHandler = false,
    });
}
finally
{
    BackgroundWork.Drain();
}
