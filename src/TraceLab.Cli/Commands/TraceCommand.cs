using System.Globalization;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Capture.Linux;
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
        int BufferKb, SyscallSet Syscalls, int TimeoutSeconds, AnalysisKind Analyses = AnalysisKind.All);

    private static int _runsInProcess;

    private readonly IAnsiConsole _console;

    public TraceCommand(IAnsiConsole console) => _console = console;

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
        Tracefs.Locate();

        var stamp = DateTime.Now.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture);
        var output = OutputDirectory.Prepare(s.Out, $"{workload.Name}-{scenario.Name}-{stamp}", s.Force);

        var root = RepositoryLayout.FindRoot();
        var exe = new NativeWorkloadBuilder(root).EnsureBuilt(workload.Name);

        using var interruption = new Interruption();
        if (s.TimeoutSeconds > 0) interruption.CancelAfter(TimeSpan.FromSeconds(s.TimeoutSeconds));

        // The counter keeps two runs in one process (tests, embedding) from ever asking for the same instance name.
        var runId = $"{workload.Name}-{stamp}-{Interlocked.Increment(ref _runsInProcess)}{Random.Shared.Next(0x10000):x4}";
        using var session = LinuxCaptureSession.Start(new LinuxCaptureOptions
        {
            RunId = runId, WorkDirectory = output.Path, BufferSizeKb = s.BufferKb, Syscalls = s.Syscalls,
        });
        var staleNotices = session.StaleInstancesRemoved
            .Select(name => $"removed stale tracefs instance {name} left by a TraceLab run that died")
            .Concat(session.StaleInstancesKept).ToList();
        foreach (var notice in staleNotices)
            _console.MarkupLine($"[yellow]{Markup.Escape(notice)}[/]");
        foreach (var missing in session.MissingEvents)
            _console.MarkupLine($"[yellow]warning: this kernel has no {Markup.Escape(missing)} event; skipped[/]");

        var resultTmp = output.File(".workload.json.tmp");
        try
        {
            return await CaptureAndReport(s, workload, scenario, values, exe, output, session, interruption, resultTmp, staleNotices);
        }
        finally
        {
            // Whatever happened, no temporary file outlives the run; the raw page files go with the session.
            OutputDirectory.TryDelete(resultTmp);
        }
    }

    private async Task<int> CaptureAndReport(Settings s, WorkloadDefinition workload, Scenario scenario,
        IReadOnlyDictionary<string, string> values, string exe, OutputDirectory output, LinuxCaptureSession session,
        Interruption interruption, string resultTmp, IReadOnlyList<string> staleNotices)
    {
        var arguments = workload.Arguments(values);
        var started = DateTimeOffset.UtcNow;
        int exitCode;
        var partial = false;
        using (var stop = CancellationTokenSource.CreateLinkedTokenSource(interruption.Token, session.CopyFailed))
        using (var run = WorkloadRun.Start(exe, arguments, session.TraceMarkerPath, resultTmp, output.File("workload.log")))
        {
            try
            {
                exitCode = await WaitWithProgress(run, session, $"{workload.Name} {scenario.Name}", stop.Token);
            }
            catch (OperationCanceledException) when (session.CopyFailed.IsCancellationRequested)
            {
                // WaitAsync has killed the workload: with nowhere to put the pages (a full disk, say) the capture is lost.
                session.ThrowIfCopyFailed();
                throw;
            }
            catch (OperationCanceledException)
            {
                partial = true;
                exitCode = -1;
                _console.MarkupLine(interruption.Interrupted
                    ? "[yellow]interrupted: workload stopped, keeping the partial trace[/]"
                    : $"[yellow]timed out after {s.TimeoutSeconds} s: workload killed, keeping the partial trace[/]");
            }
            if (!partial && exitCode != 0)
            {
                var why = run.ErrorText();
                throw new WorkloadException($"{workload.Name} exited with code {exitCode}{(why.Length > 0 ? ": " + why : "")} (log: {output.File("workload.log")})");
            }
        }

        var raw = session.Stop();
        string traceFile;
        try
        {
            traceFile = output.Commit("trace.dat", raw.WriteTraceDat);
        }
        finally
        {
            raw.DeleteRawFiles();
        }

        WorkloadResult? result = null;
        // A killed workload may leave an empty or half-written result: only a completed run's result counts.
        if (!partial && File.Exists(resultTmp))
        {
            result = WorkloadResult.Parse(File.ReadAllText(resultTmp), resultTmp);
            output.Commit("workload.json", tmp => File.Move(resultTmp, tmp));
        }

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
        var report = AnalysisPipeline.Analyze(traceFile, result, runSection, partial, pid: null, s.Analyses);
        report.Warnings.InsertRange(0, staleNotices);
        ReportFiles.Write(output, report);

        TerminalReport.Render(_console, report);
        var files = new[] { "trace.dat", "report.md", "report.json", "workload.json", "workload.log" }.Where(f => File.Exists(output.File(f)));
        _console.MarkupLine($"[bold]Files[/] {Markup.Escape(output.Path)}: {string.Join(", ", files)}");
        _console.MarkupLine($"[grey]Open the trace: trace-cmd report -i {Markup.Escape(traceFile)}   or   kernelshark {Markup.Escape(traceFile)}[/]");
        if (partial && !interruption.Interrupted)
            throw new WorkloadException($"{workload.Name} {scenario.Name} timed out after {s.TimeoutSeconds} s and was killed with its child processes; the partial trace and report are in {output.Path}");
        return partial ? ExitCodes.Interrupted : ExitCodes.Ok;
    }

    private async Task<int> WaitWithProgress(WorkloadRun run, LinuxCaptureSession session, string what, CancellationToken token)
    {
        var wait = run.WaitAsync(token);
        if (!_console.Profile.Capabilities.Interactive)
        {
            _console.MarkupLine($"running {Markup.Escape(what)} under tracing (pid {run.Pid})...");
            return await wait;
        }
        return await _console.Status().StartAsync($"running {what}", async ctx =>
        {
            while (!wait.IsCompleted)
            {
                ctx.Status($"running {Markup.Escape(what)} (pid {run.Pid}): {run.StartedAt.Elapsed.TotalSeconds:0} s, {session.BytesCopied / 1048576.0:0} MB of raw trace — Ctrl-C stops");
                await Task.WhenAny(wait, Task.Delay(500, CancellationToken.None));
            }
            return await wait;
        });
    }
}
