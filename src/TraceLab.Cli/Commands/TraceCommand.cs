using System.CommandLine;
using System.Globalization;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Capture.Linux;
using TraceLab.Cli.CommandLine;
using TraceLab.Cli.Live;
using TraceLab.Core.Capture;
using TraceLab.Formats.StackJoin;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab trace WORKLOAD SCENARIO`: build the workload, start a kernel capture, run it, write trace.dat,
/// analyze, and write report.json / report.md next to the trace.
/// </summary>
public sealed class TraceCommand
{
    /// <summary>
    /// What one `tracelab trace` run does; every setting but the workload and scenario has a default.
    /// </summary>
    public sealed record Settings(string Workload, string Scenario)
    {
        /// <summary>Workload parameters given on the command line, by name.</summary>
        public IReadOnlyDictionary<string, string> Overrides { get; init; } = new Dictionary<string, string>();
        /// <summary>Output directory; null: ./traces/WORKLOAD-SCENARIO-TIME.</summary>
        public string? Out { get; init; }
        public bool Force { get; init; }
        public int BufferKb { get; init; } = 64 * 1024;
        public SyscallSet Syscalls { get; init; } = SyscallSet.Lock;
        /// <summary>Kill the workload after this long; 0: no limit.</summary>
        public int TimeoutSeconds { get; init; }
        public AnalysisSelection Analyses { get; init; } = AnalysisSelection.All;
        /// <summary>report.html's timeline window; null: <see cref="TimelineWindow.Default"/>.</summary>
        public TimelineWindow? Timeline { get; init; }
        /// <summary>Print per-second, per-thread figures while the workload runs.</summary>
        public bool Live { get; init; }
        /// <summary>
        /// `--stacks` / `--call-graph`: record call stacks beside the trace (<see cref="PerfStackRecorder"/>), with
        /// user stacks walked this way; null: none.
        /// </summary>
        public UserStackWalk? Stacks { get; init; }
    }

    private readonly IAnsiConsole _console;
    private readonly ICaptureBackend _backend;

    /// <param name="backend">Capture backend; default: the one for this OS
    /// (<see cref="CaptureBackends.ForThisMachine"/>).</param>
    public TraceCommand(IAnsiConsole console, ICaptureBackend? backend = null)
    {
        _console = console;
        _backend = backend ?? CaptureBackends.ForThisMachine();
    }

    public static Command Create(IAnsiConsole console) => new CommandLineOptions().Command(console);

    /// <summary>
    /// The command's arguments and options. To add one: a field here, an entry in <see cref="Command"/>'s list and a
    /// line in <see cref="Bind"/> (and a property in <see cref="Settings"/>).
    /// </summary>
    private sealed class CommandLineOptions
    {
        private readonly Argument<string> _workload = new("workload")
        {
            Description = "workload to run (see `tracelab scenarios`)",
        };
        private readonly Argument<string> _scenario = new("scenario")
        {
            Description = "named scenario of the workload",
        };
        private readonly Option<string?> _out = SharedOptions.Out(
            "output directory (default: ./traces/WORKLOAD-SCENARIO-TIME)");
        private readonly Option<bool> _force = SharedOptions.Force(
            "write into an existing non-empty directory, replacing TraceLab's files");
        private readonly Option<int> _bufferKb = SharedOptions.BufferKb();
        private readonly Option<SyscallSet> _syscalls = new("--syscalls")
        {
            Description = "syscall events: none, lock (futex/semop/sched_yield), all",
            DefaultValueFactory = _ => SyscallSet.Lock,
            CustomParser = r => SharedOptions.ParseOrError(r, CaptureEventSet.Parse, SyscallSet.Lock),
        };
        private readonly Option<int> _timeout = SharedOptions.Timeout(
            "kill the workload after this many seconds (0 = no limit)");
        private readonly Option<AnalysisSelection> _analysis = SharedOptions.Analysis();
        private readonly Option<TimelineWindow?> _timeline = SharedOptions.TimelineWindow();
        private readonly Option<bool> _live = new("--live")
        {
            Description = "print per-second, per-thread switches and ready/run time while the workload runs " +
                "(ETW real-time session on Windows; the copied pages on Linux)",
        };
        private readonly Option<bool> _stacks = SharedOptions.Stacks();
        private readonly Option<UserStackWalk?> _callGraph = SharedOptions.CallGraph();
        private readonly WorkloadParameterOptions _parameters = new();

        public Command Command(IAnsiConsole console)
        {
            var command = new Command("trace", "run a workload scenario under kernel tracing and report per thread " +
                "(your own program: `trace -- PROGRAM ARGS`; running processes: `trace --pid PID[,PID...]`; " +
                "everything: `trace --system`; their options: `trace --system --help`)")
            {
                _workload, _scenario, _out, _force, _bufferKb, _syscalls, _timeout, _analysis, _timeline, _live,
                _stacks, _callGraph,
            };
            _parameters.AddTo(command);
            CommandActions.Set(command, (r, _) => new TraceCommand(console).RunAsync(Bind(r)));
            return command;
        }

        private Settings Bind(ParseResult r) => new(r.GetValue(_workload)!, r.GetValue(_scenario)!)
        {
            Overrides = _parameters.Overrides(r),
            Out = r.GetValue(_out),
            Force = r.GetValue(_force),
            BufferKb = r.GetValue(_bufferKb),
            Syscalls = r.GetValue(_syscalls),
            TimeoutSeconds = r.GetValue(_timeout),
            Analyses = r.GetValue(_analysis),
            Timeline = r.GetValue(_timeline),
            Live = r.GetValue(_live),
            Stacks = SharedOptions.StackWalkOf(r, _stacks, _callGraph),
        };
    }

    public async Task<int> RunAsync(Settings s)
    {
        var (workload, scenario, values) = WorkloadChoice.Resolve(s.Workload, s.Scenario, s.Overrides);

        // Say what privilege or mount is missing before building anything or creating directories.
        _backend.EnsureAvailable();
        if (s.Stacks is not null) TracedCapture.EnsureStacksAvailable(_backend);

        var stamp = TracedCapture.Stamp();
        var output = OutputDirectory.Prepare(s.Out, $"{workload.Name}-{scenario.Name}-{stamp}", s.Force);

        var root = RepositoryLayout.FindRoot();
        var exe = new NativeWorkloadBuilder(root).EnsureBuilt(workload.Name);

        using var interruption = new Interruption();
        if (s.TimeoutSeconds > 0) interruption.CancelAfter(TimeSpan.FromSeconds(s.TimeoutSeconds));

        using var capture = TracedCapture.Start(_backend, workload.Name, stamp, output, s.BufferKb, s.Syscalls,
            s.Stacks);
        foreach (var notice in capture.Notices)
            _console.MarkupLine($"[yellow]{Markup.Escape(notice)}[/]");
        foreach (var missing in capture.Session.MissingEvents)
            _console.MarkupLine($"[yellow]warning: this kernel has no {Markup.Escape(missing)} event; skipped[/]");

        using var live = s.Live ? LiveView.Start(capture.Session, Console.Out) : null;
        return await CaptureAndReport(s, workload, scenario, values, exe, output, capture, interruption, live);
    }

    private async Task<int> CaptureAndReport(Settings s, WorkloadDefinition workload, Scenario scenario,
        IReadOnlyDictionary<string, string> values, string exe, OutputDirectory output, TracedCapture capture,
        Interruption interruption, LiveView? live)
    {
        var arguments = workload.Arguments(values);
        var started = DateTimeOffset.UtcNow;
        var (exitCode, partial) = await capture.RunAsync(workload.Name, exe, arguments, (run, token) =>
        {
            live?.Follow(run.Pid);
            return WaitWithProgress(
                run, capture.Session, $"{workload.Name} {scenario.Name}", token, plain: live is not null);
        }, interruption.Token);
        if (partial)
            _console.MarkupLine(interruption.Interrupted
                ? "[yellow]interrupted: workload stopped, keeping the partial trace[/]"
                : $"[yellow]timed out after {s.TimeoutSeconds} s: workload killed, keeping the partial trace[/]");

        live?.Dispose();
        var runSection = new RunSection
        {
            Workload = workload.Name,
            Scenario = scenario.Name,
            Parameters = values.ToDictionary(kv => kv.Key, kv => kv.Value),
            Claims = scenario.Claims.ToList(),
            Command = $"{workload.Name} {string.Join(' ', arguments)}",
            ExitCode = exitCode,
            StartedUtc = started,
        };
        var (report, _, traceFile) =
            capture.Finish(runSection, partial, s.Analyses, s.Timeline ?? TimelineWindow.Default);

        TerminalReport.Render(_console, report);
        var files =
            new[]
                {
                    _backend.TraceFileName, Path.GetFileName(StackFile.PathFor(traceFile)), "report.md", "report.json",
                    "report.html", "workload.json", "workload.log",
                }
                .Where(f => File.Exists(output.File(f))).Concat(ReportFiles.ChartsIn(output));
        _console.MarkupLine($"[bold]Files[/] {Markup.Escape(output.Path)}: {string.Join(", ", files)}");
        _console.MarkupLine($"[grey]{Markup.Escape(_backend.OpenHint(traceFile))}[/]");
        if (partial && !interruption.Interrupted)
            throw new WorkloadException($"{workload.Name} {scenario.Name} timed out after {s.TimeoutSeconds} s and was "
                + $"killed with its child processes; the partial trace and report are in {output.Path}");
        return partial ? ExitCodes.Interrupted : ExitCodes.Ok;
    }

    /// <param name="plain">No status spinner (the live view prints lines from another thread).</param>
    private async Task<int> WaitWithProgress(
        WorkloadRun run, ICaptureSession session, string what, CancellationToken token, bool plain = false)
    {
        var wait = run.WaitAsync(token);
        if (plain || !_console.Profile.Capabilities.Interactive)
        {
            _console.MarkupLine($"running {Markup.Escape(what)} under tracing (pid {run.Pid})...");
            return await wait;
        }
        return await _console.Status().StartAsync($"running {what}", async ctx =>
        {
            while (!wait.IsCompleted)
            {
                ctx.Status($"running {Markup.Escape(what)} (pid {run.Pid}): {run.StartedAt.Elapsed.TotalSeconds:0} s, "
                    + $"{session.BytesCaptured / 1048576.0:0} MB of raw trace — Ctrl-C stops");
                await Task.WhenAny(wait, Task.Delay(500, CancellationToken.None));
            }
            return await wait;
        });
    }
}
