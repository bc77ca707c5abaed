using System.Globalization;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Capture.Linux;
using TraceLab.Cli.Live;
using TraceLab.Core.Capture;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab trace WORKLOAD SCENARIO`: build the workload, start a kernel capture, run it, write trace.dat,
/// analyze, and write report.json / report.md next to the trace.
/// </summary>
public sealed class TraceCommand
{
    public sealed record Settings(
        string Workload, string Scenario, IReadOnlyDictionary<string, string> Overrides, string? Out, bool Force,
        int BufferKb, SyscallSet Syscalls, int TimeoutSeconds, AnalysisKind Analyses = AnalysisKind.All, TimelineWindow? Timeline = null, bool Live = false);

    private readonly IAnsiConsole _console;
    private readonly ICaptureBackend _backend;

    /// <param name="backend">Capture backend; default: the one for this OS (<see cref="CaptureBackends.ForThisMachine"/>).</param>
    public TraceCommand(IAnsiConsole console, ICaptureBackend? backend = null)
    {
        _console = console;
        _backend = backend ?? CaptureBackends.ForThisMachine();
    }

    public async Task<int> RunAsync(Settings s)
    {
        var workload = WorkloadCatalog.Find(s.Workload)
            ?? throw new UsageException($"unknown workload '{s.Workload}': valid workloads are {string.Join(", ", WorkloadCatalog.All.Select(w => w.Name))}");
        var scenario = workload.FindScenario(s.Scenario)
            ?? throw new UsageException($"unknown scenario '{s.Scenario}' for {workload.Name}: valid scenarios are {string.Join(", ", workload.Scenarios.Select(x => x.Name))}");
        IReadOnlyDictionary<string, string> values;
        try { values = workload.Resolve(scenario, s.Overrides); }
        catch (WorkloadException ex) { throw new UsageException(ex.Message, ex); }

        // Say what privilege or mount is missing before building anything or creating directories.
        _backend.EnsureAvailable();

        var stamp = TracedCapture.Stamp();
        var output = OutputDirectory.Prepare(s.Out, $"{workload.Name}-{scenario.Name}-{stamp}", s.Force);

        var root = RepositoryLayout.FindRoot();
        var exe = new NativeWorkloadBuilder(root).EnsureBuilt(workload.Name);

        using var interruption = new Interruption();
        if (s.TimeoutSeconds > 0) interruption.CancelAfter(TimeSpan.FromSeconds(s.TimeoutSeconds));

        using var capture = TracedCapture.Start(_backend, workload.Name, stamp, output, s.BufferKb, s.Syscalls);
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
            return WaitWithProgress(run, capture.Session, $"{workload.Name} {scenario.Name}", token, plain: live is not null);
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
        var (report, _, traceFile) = capture.Finish(runSection, partial, s.Analyses, s.Timeline ?? TimelineWindow.Default);

        TerminalReport.Render(_console, report);
        var files = new[] { _backend.TraceFileName, "report.md", "report.json", "report.html", "workload.json", "workload.log" }.Where(f => File.Exists(output.File(f)));
        _console.MarkupLine($"[bold]Files[/] {Markup.Escape(output.Path)}: {string.Join(", ", files)}");
        _console.MarkupLine($"[grey]{Markup.Escape(_backend.OpenHint(traceFile))}[/]");
        if (partial && !interruption.Interrupted)
            throw new WorkloadException($"{workload.Name} {scenario.Name} timed out after {s.TimeoutSeconds} s and was killed with its child processes; the partial trace and report are in {output.Path}");
        return partial ? ExitCodes.Interrupted : ExitCodes.Ok;
    }

    /// <param name="plain">No status spinner (the live view prints lines from another thread).</param>
    private async Task<int> WaitWithProgress(WorkloadRun run, ICaptureSession session, string what, CancellationToken token, bool plain = false)
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
                ctx.Status($"running {Markup.Escape(what)} (pid {run.Pid}): {run.StartedAt.Elapsed.TotalSeconds:0} s, {session.BytesCaptured / 1048576.0:0} MB of raw trace — Ctrl-C stops");
                await Task.WhenAny(wait, Task.Delay(500, CancellationToken.None));
            }
            return await wait;
        });
    }
}
