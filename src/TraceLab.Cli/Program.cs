using System.CommandLine;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Capture.Linux;
using TraceLab.Cli;
using TraceLab.Cli.Commands;
using TraceLab.Core;
using TraceLab.Workloads;

var console = AnsiConsole.Console;
// Redirected output has no width; the per-thread table needs more than the 80-column fallback.
if (Console.IsOutputRedirected) console.Profile.Width = 220;
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
            root.Subcommands.Add(SweepCommandLine.Sweep(console));
            root.Subcommands.Add(SweepCommandLine.Sweeps(console));
            return root;
        }

        private static Option<string> AnalysisOption() => new("--analysis")
        {
            Description = "analyses to report, comma-separated: threads, kernel, convoys, wakeups, smp, waitgraph (default: all)",
            DefaultValueFactory = _ => "all",
        };

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
            var parameters = WorkloadCatalog.All.SelectMany(w => w.Parameters).DistinctBy(p => p.Name)
                .Select(p => (p.Name, Option: new Option<string?>($"--{p.Name}") { Description = p.Description })).ToList();

            var cmd = new Command("trace", "run a workload scenario under kernel tracing and report per thread") { workload, scenario, outDir, force, bufferKb, syscalls, timeout, analysis };
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
                return await new TraceCommand(console).RunAsync(new TraceCommand.Settings(
                    r.GetValue(workload)!, r.GetValue(scenario)!, overrides, r.GetValue(outDir), r.GetValue(force),
                    r.GetValue(bufferKb), set, r.GetValue(timeout), kinds));
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
            var cmd = new Command("analyze", "analyze an existing trace file") { trace, outDir, force, pid, analysis, salvage };
            cmd.SetAction((r, _) => Guard(() => Task.FromResult(
                new AnalyzeCommand(console).Run(r.GetValue(trace)!, r.GetValue(outDir), r.GetValue(force), r.GetValue(pid),
                    ParseAnalyses(r.GetValue(analysis)!), r.GetValue(salvage)))));
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
            catch (Exception ex) when (ex is WorkloadException or TraceLab.Sweeps.SweepException or TracingUnavailableException or TraceFormatException or IOException or UnauthorizedAccessException or PlatformNotSupportedException)
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
