using System.CommandLine;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Parallel;
using TraceLab.Analyzers.Timeline;
using TraceLab.Capture.Linux;
using TraceLab.Cli;
using TraceLab.Cli.Commands;
using TraceLab.Core;
using TraceLab.Workloads;

var console = AnsiConsole.Console;
// Redirected output has no width; the per-thread table needs more than the 80-column fallback.
if (Console.IsOutputRedirected) console.Profile.Width = 220;
// `trace -- PROGRAM`, `trace --pid`, `trace --system`: the program's arguments must never meet TraceLab's parser.
if (TraceTargetCommandLine.Matches(args)) return await TraceTargetCommandLine.RunAsync(args, console);
var root = CommandLine.Build(console);
var parse = root.Parse(args);
if (parse.Errors.Count > 0)
{
    Console.Error.WriteLine($"tracelab: {parse.Errors[0].Message} (see tracelab --help)");
    return ExitCodes.Usage;
}
// TraceLab handles Ctrl-C itself (stop the workload, keep the partial trace, still write the report): the
// parser's own handler would end the process after a fixed timeout, mid-write.
return await parse.InvokeAsync(new InvocationConfiguration { ProcessTerminationTimeout = null, EnableDefaultExceptionHandler = false });

namespace TraceLab.Cli
{
    /// <summary>The command tree; each action runs through <see cref="Guard"/> so users see one line, never a stack trace.</summary>
    internal static class CommandLine
    {
        public static RootCommand Build(IAnsiConsole console)
        {
            var root = new RootCommand("TraceLab: see, in a kernel trace, why threads that contend for a lock run slowly");
            root.Subcommands.Add(Trace(console));
            root.Subcommands.Add(Analyze(console));
            root.Subcommands.Add(Scenarios(console));
            root.Subcommands.Add(Export(console));
            root.Subcommands.Add(Bench(console));
            root.Subcommands.Add(Overhead(console));
            root.Subcommands.Add(SweepCommandLine.Sweep(console));
            root.Subcommands.Add(SweepCommandLine.Sweeps(console));
            return root;
        }

        private static Option<string> AnalysisOption() => new("--analysis")
        {
            Description = "analyses to report, comma-separated: threads, kernel, convoys, wakeups, smp, waitgraph (default: all)",
            DefaultValueFactory = _ => "all",
        };

        private static Option<int?> AnalysisThreadsOption() => new("--analysis-threads")
        {
            Description = "threads that run the analyzers besides the one reading the trace; 0: all on one thread (default: CPUs - 1, at most 6)",
        };

        private static int? ParseAnalysisThreads(int? n) => n is null or (>= 0 and <= AnalysisPlan.MaxThreads)
            ? n
            : throw new UsageException($"--analysis-threads must be between 0 and {AnalysisPlan.MaxThreads}");

        private static Option<string?> TimelineWindowOption() => new("--timeline-window")
        {
            Description = "report.html's thread timeline: START:LENGTH in ms from the region's begin (default 10:1)",
        };

        private static TimelineWindow? ParseTimelineWindow(string? text)
        {
            if (text is null) return null;
            try { return TimelineWindow.Parse(text); }
            catch (FormatException ex) { throw new UsageException(ex.Message, ex); }
        }

        private static AnalysisKind ParseAnalyses(string text)
        {
            try { return AnalysisKinds.Parse(text); }
            catch (ArgumentException ex) { throw new UsageException(ex.Message, ex); }
        }

        private static Command Trace(IAnsiConsole console)
        {
            var workload = new Argument<string>("workload") { Description = "workload to run (see `tracelab scenarios`)" };
            var scenario = new Argument<string>("scenario") { Description = "named scenario of the workload" };
            var outDir = new Option<string?>("--out") { Description = "output directory (default: ./traces/WORKLOAD-SCENARIO-TIME)" };
            var force = new Option<bool>("--force") { Description = "write into an existing non-empty directory, replacing TraceLab's files" };
            var bufferKb = new Option<int>("--buffer-kb") { Description = "per-CPU ring buffer size in KiB", DefaultValueFactory = _ => 64 * 1024 };
            var syscalls = new Option<string>("--syscalls") { Description = "syscall events: none, lock (futex/semop/sched_yield), all", DefaultValueFactory = _ => "lock" };
            var timeout = new Option<int>("--timeout") { Description = "kill the workload after this many seconds (0 = no limit)" };
            var analysis = AnalysisOption();
            var timelineWindow = TimelineWindowOption();
            var live = new Option<bool>("--live") { Description = "print per-second, per-thread switches and ready/run time while the workload runs (ETW real-time session on Windows; the copied pages on Linux)" };
            var parameters = WorkloadCatalog.All.SelectMany(w => w.Parameters).DistinctBy(p => p.Name)
                .Select(p => (p.Name, Option: new Option<string?>($"--{p.Name}") { Description = p.Description })).ToList();

            var cmd = new Command("trace", "run a workload scenario under kernel tracing and report per thread") { workload, scenario, outDir, force, bufferKb, syscalls, timeout, analysis, timelineWindow, live };
            foreach (var (_, o) in parameters) cmd.Options.Add(o);
            cmd.SetAction((r, _) => Guard(async () =>
            {
                var overrides = parameters.Where(p => r.GetValue(p.Option) is not null)
                    .ToDictionary(p => p.Name, p => r.GetValue(p.Option)!, StringComparer.OrdinalIgnoreCase);
                if (r.GetValue(bufferKb) is < 64 or > 4 * 1024 * 1024) throw new UsageException("--buffer-kb must be between 64 and 4194304");
                if (r.GetValue(timeout) < 0) throw new UsageException("--timeout must be 0 or more seconds");
                SyscallSet set;
                try { set = CaptureEventSet.Parse(r.GetValue(syscalls)!); }
                catch (ArgumentException ex) { throw new UsageException(ex.Message, ex); }
                var kinds = ParseAnalyses(r.GetValue(analysis)!);
                var window = ParseTimelineWindow(r.GetValue(timelineWindow));
                return await new TraceCommand(console).RunAsync(new TraceCommand.Settings(
                    r.GetValue(workload)!, r.GetValue(scenario)!, overrides, r.GetValue(outDir), r.GetValue(force),
                    r.GetValue(bufferKb), set, r.GetValue(timeout), kinds, window, r.GetValue(live)));
            }));
            return cmd;
        }

        private static Command Analyze(IAnsiConsole console)
        {
            var trace = new Argument<string>("trace") { Description = "trace file (trace.dat)" };
            var outDir = new Option<string?>("--out") { Description = "where report.json / report.md go (default: beside the trace)" };
            var force = new Option<bool>("--force") { Description = "replace existing reports" };
            var pid = new Option<int?>("--pid") { Description = "process to report on (default: the workload's, from its markers or workload.json)" };
            var analysis = AnalysisOption();
            var salvage = new Option<bool>("--salvage")
            {
                Description = "analyze a truncated or corrupt trace.dat up to the damage on each CPU; a warning says what was skipped",
            };
            var timelineWindow = TimelineWindowOption();
            var threads = AnalysisThreadsOption();
            var cmd = new Command("analyze", "analyze an existing trace file") { trace, outDir, force, pid, analysis, salvage, timelineWindow, threads };
            cmd.SetAction((r, _) => Guard(() => Task.FromResult(
                new AnalyzeCommand(console).Run(r.GetValue(trace)!, r.GetValue(outDir), r.GetValue(force), r.GetValue(pid),
                    ParseAnalyses(r.GetValue(analysis)!), r.GetValue(salvage), ParseTimelineWindow(r.GetValue(timelineWindow)),
                    ParseAnalysisThreads(r.GetValue(threads))))));
            return cmd;
        }

        private static Command Export(IAnsiConsole console)
        {
            var trace = new Argument<string>("trace") { Description = "trace file (trace.dat, or .etl on Windows)" };
            var to = new Option<string>("--to") { Description = "output format: perfetto", Required = true };
            var output = new Option<string?>("--output", "-o") { Description = "output file (default: the trace's name with .pftrace)" };
            var force = new Option<bool>("--force") { Description = "replace an existing output file" };
            var pid = new Option<int?>("--pid") { Description = "process whose threads and lock objects get analysis tracks (default: the workload's, from its markers)" };
            var salvage = new Option<bool>("--salvage") { Description = "export a truncated or corrupt trace.dat up to the damage on each CPU" };
            var cmd = new Command("export", "write a trace with TraceLab's analysis for another viewer (Perfetto)") { trace, to, output, force, pid, salvage };
            cmd.SetAction((r, _) => Guard(() => Task.FromResult(new ExportCommand(console).Run(
                r.GetValue(trace)!, r.GetValue(to)!, r.GetValue(output), r.GetValue(force), r.GetValue(pid), r.GetValue(salvage)))));
            return cmd;
        }

        private static Command Overhead(IAnsiConsole console)
        {
            var workload = new Argument<string>("workload") { Description = "workload to run (see `tracelab scenarios`)" };
            var scenario = new Argument<string>("scenario") { Description = "named scenario of the workload" };
            var repeat = new Option<int>("--repeat") { Description = "rounds (each: one untraced run, then one traced run per syscall set)", DefaultValueFactory = _ => 5 };
            var syscalls = new Option<string>("--syscalls") { Description = "syscall sets to measure, comma-separated: none, lock, all", DefaultValueFactory = _ => "none,lock,all" };
            var bufferKb = new Option<int>("--buffer-kb") { Description = "per-CPU ring buffer size in KiB", DefaultValueFactory = _ => 64 * 1024 };
            var parameters = WorkloadCatalog.All.SelectMany(w => w.Parameters).DistinctBy(p => p.Name)
                .Select(p => (p.Name, Option: new Option<string?>($"--{p.Name}") { Description = p.Description })).ToList();
            var cmd = new Command("overhead", "slowdown of a scenario when traced: untraced and traced runs interleaved, median and min/max per syscall set")
                { workload, scenario, repeat, syscalls, bufferKb };
            foreach (var (_, o) in parameters) cmd.Options.Add(o);
            cmd.SetAction((r, ct) => Guard(async () =>
            {
                var overrides = parameters.Where(p => r.GetValue(p.Option) is not null)
                    .ToDictionary(p => p.Name, p => r.GetValue(p.Option)!, StringComparer.OrdinalIgnoreCase);
                if (r.GetValue(bufferKb) is < 64 or > 4 * 1024 * 1024) throw new UsageException("--buffer-kb must be between 64 and 4194304");
                return await new OverheadCommand(console).RunAsync(new OverheadCommand.Settings(r.GetValue(workload)!, r.GetValue(scenario)!,
                    overrides, r.GetValue(repeat), OverheadCommand.ParseSets(r.GetValue(syscalls)!), r.GetValue(bufferKb)), ct);
            }));
            return cmd;
        }

        private static Command Bench(IAnsiConsole console)
        {
            var trace = new Argument<string>("trace") { Description = "trace file (trace.dat or perf.data)" };
            var repeat = new Option<int>("--repeat") { Description = "runs of each measurement (best and median are shown)", DefaultValueFactory = _ => 5 };
            var analysis = AnalysisOption();
            var threads = AnalysisThreadsOption();
            var cmd = new Command("bench", "measure read and read + analysis speed on a trace file (events/s, MB/s, CPU time, peak RSS)") { trace, repeat, analysis, threads };
            cmd.SetAction((r, _) => Guard(() => Task.FromResult(
                new BenchCommand(console).Run(r.GetValue(trace)!, r.GetValue(repeat), ParseAnalyses(r.GetValue(analysis)!),
                    ParseAnalysisThreads(r.GetValue(threads)) ?? AnalysisPlan.DefaultThreads))));
            return cmd;
        }

        private static Command Scenarios(IAnsiConsole console)
        {
            var cmd = new Command("scenarios", "list workloads and their scenarios with the seed claims they test");
            cmd.SetAction((_, _) => Guard(() => Task.FromResult(new ScenariosCommand(console).Run())));
            return cmd;
        }

        /// <summary>Maps every failure to one line on stderr and an exit code.</summary>
        internal static async Task<int> Guard(Func<Task<int>> action)
        {
            try
            {
                return await action();
            }
            catch (UsageException ex)
            {
                return Fail(ex.Message, ExitCodes.Usage);
            }
            catch (Exception ex) when (ex is WorkloadException or TraceLab.Sweeps.SweepException or TracingUnavailableException or TraceLab.Core.Capture.CaptureUnavailableException or TraceFormatException or IOException or UnauthorizedAccessException or PlatformNotSupportedException)
            {
                return Fail(ex.Message, ExitCodes.Failure);
            }
            catch (OperationCanceledException)
            {
                return Fail("interrupted", ExitCodes.Interrupted);
            }
            catch (Exception ex)
            {
                if (Environment.GetEnvironmentVariable("TRACELAB_DEBUG") == "1") Console.Error.WriteLine(ex);
                return Fail($"internal error: {ex.GetType().Name}: {ex.Message} (set TRACELAB_DEBUG=1 for details)", ExitCodes.Failure);
            }
        }

        private static int Fail(string message, int code)
        {
            Console.Error.WriteLine($"tracelab: {message}");
            return code;
        }
    }
}
