using System.CommandLine;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Capture.Linux;
using TraceLab.Cli.CommandLine;
using TraceLab.Core.Capture;

namespace TraceLab.Cli.Commands;

/// <summary>
/// The command line of `tracelab trace -- PROGRAM [ARGS...]`, `trace --pid PID[,PID...]` and `trace --system`.
/// Everything after the first `--` is the program's own command line, untouched by TraceLab's parser.
/// </summary>
public static class TraceTargetCommandLine
{
    public const string Separator = "--";

    /// <summary>
    /// True for a `trace` command line that names a program, pids or the system instead of a workload.
    /// </summary>
    public static bool Matches(IReadOnlyList<string> args)
    {
        if (args.Count == 0 || args[0] != "trace") return false;
        foreach (var a in args.Skip(1))
        {
            if (a == Separator) return true;
            if (a is "--pid" or "--system" || a.StartsWith("--pid=", StringComparison.Ordinal)) return true;
        }
        return false;
    }

    public static async Task<int> RunAsync(IReadOnlyList<string> args, IAnsiConsole console)
    {
        var separator = args.ToList().IndexOf(Separator);
        var own = separator < 0 ? args.Skip(1).ToList() : args.Skip(1).Take(separator - 1).ToList();
        var program = separator < 0 ? [] : args.Skip(separator + 1).ToList();
        var cmd = Build(out var o);
        var parse = cmd.Parse(own);
        if (parse.Errors.Count > 0)
            return CommandActions.Fail($"{parse.Errors[0].Message} (see tracelab trace --help)", ExitCodes.Usage);
        if (own.Contains("--help") || own.Contains("-h") || own.Contains("-?")) return await parse.InvokeAsync();
        return await CommandActions.Guard(async () =>
        {
            var settings = Settings(parse, o, separator >= 0, program);
            // With `--` the program owns stdout: TraceLab's own lines go to stderr, like perf's.
            var target = settings.Mode == TraceTargetMode.Program ? StderrConsole() : console;
            return await new TraceTargetCommand(target).RunAsync(settings);
        });
    }

    private sealed record Options(
        Option<string?> Pid, Option<bool> System, Option<double> Duration, Option<string?> User, Option<string?> Out,
        Option<bool> Force, Option<int> BufferKb, Option<SyscallSet> Syscalls, Option<AnalysisSelection> Analysis,
        Option<TimelineWindow?> TimelineWindow, Option<int> Top, Option<string?> ExcludePids, Option<bool> Stacks,
        Option<UserStackWalk?> CallGraph);

    private static Command Build(out Options o)
    {
        var duration = new Option<double>("--duration")
        {
            Description = "with --pid or --system: stop after this many seconds " +
                "(default: Ctrl-C, or when the --pid processes exit)",
        };
        duration.Validators.Add(r =>
        {
            var d = r.GetValueOrDefault<double>();
            if (d < 0 || double.IsNaN(d) || double.IsInfinity(d)) r.AddError("--duration must be 0 or more seconds");
        });
        o = new Options(
            new Option<string?>("--pid")
            {
                Description = "attach to running processes: PID[,PID...] (all their threads)",
            },
            new Option<bool>("--system") { Description = "trace every process on the machine" },
            duration,
            new Option<string?>("--user")
            {
                Description = "with --: run the program as this user (TraceLab runs as root under sudo)",
            },
            SharedOptions.Out("output directory (default: ./traces/NAME-TIME)"),
            SharedOptions.Force("write into an existing non-empty directory, replacing TraceLab's files"),
            SharedOptions.BufferKb(),
            new Option<SyscallSet>("--syscalls")
            {
                Description = "syscall events: none, lock (futex/semop/sched_yield), waits (lock plus the blocking " +
                    "syscalls that tell what a wait was for; default of --pid and --system), all",
                DefaultValueFactory = _ => SyscallSet.Lock,
                CustomParser = r => SharedOptions.ParseOrError(r, CaptureEventSet.Parse, SyscallSet.Lock),
            },
            SharedOptions.Analysis(),
            SharedOptions.TimelineWindow(),
            SharedOptions.Top(),
            SharedOptions.ExcludePids(),
            SharedOptions.Stacks(),
            SharedOptions.CallGraph());
        return new Command("trace",
            "trace a program (-- PROGRAM ARGS), running processes (--pid) or the whole system (--system)")
        {
            o.Pid, o.System, o.Duration, o.User, o.Out, o.Force, o.BufferKb, o.Syscalls, o.Analysis, o.TimelineWindow,
            o.Top, o.ExcludePids, o.Stacks, o.CallGraph, new System.CommandLine.Help.HelpOption(),
        };
    }

    private static TraceTargetCommand.Settings Settings(ParseResult r, Options o, bool hasProgram, List<string> program)
    {
        var pid = r.GetValue(o.Pid);
        var system = r.GetValue(o.System);
        if (hasProgram && pid is not null) throw new UsageException("--pid and -- PROGRAM cannot be used together");
        if (system && (hasProgram || pid is not null))
            throw new UsageException("--system cannot be combined with --pid or -- PROGRAM");
        if (hasProgram && program.Count == 0) throw new UsageException("no program given after --");
        var duration = r.GetValue(o.Duration);
        if (hasProgram && duration > 0)
            throw new UsageException("--duration applies to --pid and --system (a program is traced until it exits)");
        var user = r.GetValue(o.User);
        if (user is not null && !hasProgram) throw new UsageException("--user applies to -- PROGRAM only");
        if (r.GetResult(o.Top) is { Implicit: false } && (hasProgram || pid is not null))
            throw new UsageException("--top applies to --system (a report with a target shows that target)");
        var mode = hasProgram ? TraceTargetMode.Program
            : pid is not null ? TraceTargetMode.Attach
            : TraceTargetMode.System;
        return new TraceTargetCommand.Settings(mode, program, pid, user, duration, r.GetValue(o.Out),
            r.GetValue(o.Force),
            r.GetValue(o.BufferKb), SyscallsFor(r, o, mode), r.GetValue(o.Analysis), r.GetValue(o.TimelineWindow),
            r.GetValue(o.Top))
        {
            ExcludePids = SharedOptions.PidList(r.GetValue(o.ExcludePids)),
            Stacks = SharedOptions.StackWalkOf(r, o.Stacks, o.CallGraph),
        };
    }

    /// <summary>
    /// --syscalls as given; by default lock for a program TraceLab starts, waits for --pid and --system, whose
    /// reports must tell idle, I/O and lock waits of programs it did not write apart (docs/metrics.md#wait-classes).
    /// </summary>
    private static SyscallSet SyscallsFor(ParseResult r, Options o, TraceTargetMode mode) =>
        r.GetResult(o.Syscalls) is { Implicit: false } || mode == TraceTargetMode.Program
            ? r.GetValue(o.Syscalls)
            : SyscallSet.Waits;

    private static IAnsiConsole StderrConsole()
    {
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(Console.Error),
            Ansi = Console.IsErrorRedirected ? AnsiSupport.No : AnsiSupport.Detect,
            ColorSystem = Console.IsErrorRedirected ? ColorSystemSupport.NoColors : ColorSystemSupport.Detect,
        });
        return TerminalWidth.Limit(console, Console.IsErrorRedirected);
    }
}
