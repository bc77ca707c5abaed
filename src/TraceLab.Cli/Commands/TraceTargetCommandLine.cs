using System.CommandLine;
using Spectre.Console;
using TraceLab.Capture.Linux;

namespace TraceLab.Cli.Commands;

/// <summary>
/// The command line of `tracelab trace -- PROGRAM [ARGS...]`, `trace --pid PID[,PID...]` and `trace --system`.
/// Everything after the first `--` is the program's own command line, untouched by TraceLab's parser.
/// </summary>
public static class TraceTargetCommandLine
{
    public const string Separator = "--";

    /// <summary>True for a `trace` command line that names a program, pids or the system instead of a workload.</summary>
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
            return Fail($"{parse.Errors[0].Message} (see tracelab trace --help)", ExitCodes.Usage);
        if (own.Contains("--help") || own.Contains("-h") || own.Contains("-?")) return await parse.InvokeAsync();
        return await CommandLine.Guard(async () =>
        {
            var settings = Settings(parse, o, separator >= 0, program);
            // With `--` the program owns stdout: TraceLab's own lines go to stderr, like perf's.
            var target = settings.Mode == TraceTargetMode.Program ? StderrConsole() : console;
            return await new TraceTargetCommand(target).RunAsync(settings);
        });
    }

    private sealed record Options(
        Option<string?> Pid, Option<bool> System, Option<double> Duration, Option<string?> User, Option<string?> Out,
        Option<bool> Force, Option<int> BufferKb, Option<string> Syscalls, Option<string> Analysis,
        Option<string?> TimelineWindow);

    private static Command Build(out Options o)
    {
        o = new Options(
            new Option<string?>("--pid") { Description = "attach to running processes: PID[,PID...] (all their threads)" },
            new Option<bool>("--system") { Description = "trace every process on the machine" },
            new Option<double>("--duration") { Description = "with --pid or --system: stop after this many seconds (default: Ctrl-C, or when the --pid processes exit)" },
            new Option<string?>("--user") { Description = "with --: run the program as this user (TraceLab runs as root under sudo)" },
            new Option<string?>("--out") { Description = "output directory (default: ./traces/NAME-TIME)" },
            new Option<bool>("--force") { Description = "write into an existing non-empty directory, replacing TraceLab's files" },
            new Option<int>("--buffer-kb") { Description = "per-CPU ring buffer size in KiB", DefaultValueFactory = _ => 64 * 1024 },
            new Option<string>("--syscalls") { Description = "syscall events: none, lock (futex/semop/sched_yield), all", DefaultValueFactory = _ => "lock" },
            new Option<string>("--analysis") { Description = "analyses to report (default: all)", DefaultValueFactory = _ => "all" },
            new Option<string?>("--timeline-window") { Description = "report.html's thread timeline: START:LENGTH in ms from the region's begin" });
        var cmd = new Command("trace", "trace a program (-- PROGRAM ARGS), running processes (--pid) or the whole system (--system)")
        {
            o.Pid, o.System, o.Duration, o.User, o.Out, o.Force, o.BufferKb, o.Syscalls, o.Analysis, o.TimelineWindow,
        };
        return cmd;
    }

    private static TraceTargetCommand.Settings Settings(ParseResult r, Options o, bool hasProgram, List<string> program)
    {
        var pid = r.GetValue(o.Pid);
        var system = r.GetValue(o.System);
        if (r.UnmatchedTokens.Count > 0)
            throw new UsageException($"unexpected '{r.UnmatchedTokens[0]}': a workload cannot be combined with --, --pid or --system");
        if (hasProgram && pid is not null) throw new UsageException("--pid and -- PROGRAM cannot be used together");
        if (system && (hasProgram || pid is not null)) throw new UsageException("--system cannot be combined with --pid or -- PROGRAM");
        if (hasProgram && program.Count == 0) throw new UsageException("no program given after --");
        var duration = r.GetValue(o.Duration);
        if (duration < 0 || double.IsNaN(duration) || double.IsInfinity(duration))
            throw new UsageException("--duration must be 0 or more seconds");
        if (hasProgram && duration > 0) throw new UsageException("--duration applies to --pid and --system (a program is traced until it exits)");
        var user = r.GetValue(o.User);
        if (user is not null && !hasProgram) throw new UsageException("--user applies to -- PROGRAM only");
        if (r.GetValue(o.BufferKb) is < 64 or > 4 * 1024 * 1024) throw new UsageException("--buffer-kb must be between 64 and 4194304");
        SyscallSet set;
        try { set = CaptureEventSet.Parse(r.GetValue(o.Syscalls)!); }
        catch (ArgumentException ex) { throw new UsageException(ex.Message, ex); }
        Analyzers.AnalysisKind kinds;
        try { kinds = Analyzers.AnalysisKinds.Parse(r.GetValue(o.Analysis)!); }
        catch (ArgumentException ex) { throw new UsageException(ex.Message, ex); }
        Analyzers.Timeline.TimelineWindow? window = null;
        if (r.GetValue(o.TimelineWindow) is { } w)
        {
            try { window = Analyzers.Timeline.TimelineWindow.Parse(w); }
            catch (FormatException ex) { throw new UsageException(ex.Message, ex); }
        }
        var mode = hasProgram ? TraceTargetMode.Program : pid is not null ? TraceTargetMode.Attach : TraceTargetMode.System;
        return new TraceTargetCommand.Settings(mode, program, pid, user, duration, r.GetValue(o.Out), r.GetValue(o.Force),
            r.GetValue(o.BufferKb), set, kinds, window);
    }

    private static IAnsiConsole StderrConsole()
    {
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(Console.Error),
            Ansi = Console.IsErrorRedirected ? AnsiSupport.No : AnsiSupport.Detect,
            ColorSystem = Console.IsErrorRedirected ? ColorSystemSupport.NoColors : ColorSystemSupport.Detect,
        });
        if (Console.IsErrorRedirected) console.Profile.Width = 220;
        return console;
    }

    private static int Fail(string message, int code)
    {
        Console.Error.WriteLine($"tracelab: {message}");
        return code;
    }
}
