using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Capture.Linux;
using TraceLab.Cli.Commands;
using TraceLab.Core.Capture;
using TraceLab.Formats.StackJoin;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Cli;

/// <summary>
/// One workload run under a kernel capture, on whichever <see cref="ICaptureBackend"/> this OS has: start the
/// capture, run the workload, stop, commit the trace file and workload.json, analyze, write the report files.
/// `tracelab trace` (with its console, spinner and live view around it) and `sweep --trace` both run through here.
/// </summary>
public sealed class TracedCapture : IDisposable
{
    private static int _runsInProcess;

    private readonly ICaptureBackend _backend;
    private readonly OutputDirectory _output;
    private readonly List<string> _notices;

    private readonly PerfStackRecorder? _stacks;

    private TracedCapture(ICaptureBackend backend, ICaptureSession session, OutputDirectory output,
        PerfStackRecorder? stacks)
    {
        _backend = backend;
        Session = session;
        _output = output;
        _stacks = stacks;
        _notices = [.. session.Notices];
    }

    /// <summary>How long perf may take to start recording, and to write its file once stopped.</summary>
    private static readonly TimeSpan PerfReady = TimeSpan.FromSeconds(60), PerfFinish = TimeSpan.FromSeconds(120);

    public ICaptureSession Session { get; }
    /// <summary>
    /// Stale kernel state removed or kept, then the stopped capture's notes: told to the user and kept in the report's
    /// warnings.
    /// </summary>
    public IReadOnlyList<string> Notices => _notices;
    /// <summary>Where the workload writes its result until the run is known to be complete.</summary>
    public string ResultTemp => _output.File(".workload.json.tmp");

    /// <param name="stamp">The run's time stamp (yyyyMMdd-HHmmss), part of the capture's kernel object name.</param>
    /// <param name="stacks">`--stacks`: the stacks of blocking switches and wakeups (tracefs: perf records them
    /// beside the trace, <see cref="PerfStackRecorder"/>, user stacks walked this way; ETW: the session's own stack
    /// walks); null: none.</param>
    public static TracedCapture Start(ICaptureBackend backend, string workloadName, string stamp,
        OutputDirectory output, int bufferKb, SyscallSet syscalls, UserStackWalk? stacks = null)
    {
        var perf = stacks is not null ? EnsureStacksAvailable(backend) : null;
        // The counter keeps two runs in one process (a sweep, tests) from ever asking for the same instance name.
        var runId =
            $"{workloadName}-{stamp}-{Interlocked.Increment(ref _runsInProcess)}{Random.Shared.Next(0x10000):x4}";
        var session = backend.Start(new CaptureRequest
        {
            RunId = runId,
            WorkDirectory = output.Path,
            BufferSizeKb = bufferKb,
            Syscalls =
                CaptureBackends.Syscalls(syscalls),
            SwitchStacks = stacks is not null,
        });
        PerfStackRecorder? recorder = null;
        try
        {
            if (perf is not null && stacks is { } walk)
            {
                recorder = PerfStackRecorder.Start(perf, output.File(".stacks.perf.data.tmp"), PerfReady, walk);
                // If TraceLab dies, its capture's guard takes perf down with the tracefs instance.
                (session as ICaptureGuard)?.KillWithCapture(recorder.Pid);
            }

            // Before anything else is traced: the trace says which processes are TraceLab's own (its guard and perf
            // too).
            new TargetMarkers(session).Self((session is IHelperProcesses helpers ? helpers.HelperPids : [])
                .Concat(recorder is null ? [] : [recorder.Pid]));
            return new TracedCapture(backend, session, output, recorder);
        }
        catch
        {
            recorder?.Dispose();
            session.Dispose();
            throw;
        }
    }

    /// <summary>
    /// The perf executable `--stacks` runs beside a tracefs capture (null for ETW, which walks the stacks itself:
    /// CSwitch, ReadyThread); throws <see cref="CaptureUnavailableException"/> (one line) when it cannot be found,
    /// before any directory is made or program started.
    /// </summary>
    public static string? EnsureStacksAvailable(ICaptureBackend backend)
    {
        if (backend is not TracefsCaptureBackend) return null;
        try
        {
            // Found as a shell finds a command, as the traced program itself is.
            return TraceLab.Workloads.Targets.TargetProgram.Resolve("perf");
        }
        catch (TraceLab.Workloads.Targets.TargetException)
        {
            throw new CaptureUnavailableException(PerfStackRecorder.PerfMissing);
        }
    }

    public static string Stamp() => DateTime.Now.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture);

    /// <summary>
    /// Runs the workload to its end through <paramref name="wait"/> (which may show progress or follow the pid).
    /// Cancellation (Ctrl-C, timeout) kills it and returns Partial = true; a lost capture or a failing workload throws.
    /// </summary>
    public async Task<(int ExitCode, bool Partial)> RunAsync(
        string workloadName, string exe, IReadOnlyList<string> arguments,
        Func<WorkloadRun, CancellationToken, Task<int>> wait, CancellationToken cancellationToken)
    {
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, Session.Failed);
        using var run = WorkloadRun.Start(exe, arguments, Session.MarkerPath, ResultTemp, _output.File("workload.log"));
        // A built-in workload dies with TraceLab: if TraceLab is killed, the capture's guard kills it.
        var guard = Session as ICaptureGuard;
        guard?.KillWithCapture(run.Pid);
        try
        {
            return await WaitForWorkload(workloadName, run, wait, stop.Token);
        }
        finally
        {
            run.Kill();
            guard?.Release(run.Pid);
        }
    }

    private async Task<(int ExitCode, bool Partial)> WaitForWorkload(string workloadName, WorkloadRun run,
        Func<WorkloadRun, CancellationToken, Task<int>> wait, CancellationToken stop)
    {
        int exitCode;
        try
        {
            exitCode = await wait(run, stop);
        }
        catch (OperationCanceledException) when (Session.Failed.IsCancellationRequested)
        {
            // WaitAsync has killed the workload: with nowhere to put the pages (a full disk, say) the capture is lost.
            Session.ThrowIfFailed();
            throw;
        }
        catch (OperationCanceledException)
        {
            return (-1, true);
        }
        if (exitCode != 0)
        {
            var why = run.ErrorText();
            throw new WorkloadException($"{workloadName} exited with code "
                + $"{exitCode}{(why.Length > 0 ? ": " + why : "")} (log: {_output.File("workload.log")})");
        }
        return (exitCode, false);
    }

    /// <summary>
    /// Stops the capture, commits the trace file and (for a complete run) workload.json, analyzes, and writes
    /// report.json / .md / .html. <paramref name="timeline"/> null: no thread timeline in report.html (sweeps).
    /// </summary>
    /// <param name="pid">The process to report on (a traced program or attached process); null: from the
    /// markers.</param>
    /// <param name="topProcesses">Without a target (--system): the top processes that get a detailed section.</param>
    /// <param name="focusTimeline">The user chose no window: a system report's timeline shows where its first
    /// finding is worst (<see cref="TraceLab.Reporting.Html.TimelineFocus"/>).</param>
    public TracedRunFiles Finish(
        RunSection runSection, bool partial, AnalysisSelection analyses, TimelineWindow? timeline,
        int? pid = null, int topProcesses = SystemOverview.DefaultTop, bool focusTimeline = false,
        IReadOnlyList<int>? excludePids = null)
    {
        var captured = Session.Stop();
        // perf next, before the trace is written: what it records after the trace's end has no event to go with.
        var stacksRecorded = StopStacks();
        string traceFile;
        try
        {
            traceFile = _output.Commit(_backend.TraceFileName, captured.WriteTo);
        }
        finally
        {
            captured.Discard();
        }
        _notices.AddRange(captured.Notes);
        if (stacksRecorded) CommitStacks(traceFile);

        WorkloadResult? result = null;
        // A killed workload may leave an empty or half-written result: only a completed run's result counts.
        if (!partial && File.Exists(ResultTemp))
        {
            result = WorkloadResult.Parse(File.ReadAllText(ResultTemp), ResultTemp);
            _output.Commit("workload.json", tmp => File.Move(ResultTemp, tmp));
        }

        if (timeline is not null) BackgroundWork.Run(TraceLab.Charts.ReportChartImages.WarmUp);
        var analysis = TraceAnalysis.Run(new AnalysisRequest(traceFile)
        {
            Workload = result,
            Run = runSection,
            Partial = partial,
            Pid = pid,
            Analyses = analyses,
            Timeline = timeline,
            FocusTimeline = focusTimeline,
            // A system report's focused timeline is read again while the other files are made.
            RecordTimelineBeside = BackgroundWork.RunOnOwnThread,
            TopProcesses = topProcesses,
            Notices = _notices,
            ExcludePids = excludePids,
        });
        var report = analysis.Report;
        // Charts go with the timeline: sweep runs ask for neither and stay fast.
        ReportFiles.Write(_output, report, analysis.TimelineRecording, charts: timeline is not null);
        return new TracedRunFiles(report, result, traceFile);
    }

    /// <summary>Stops perf; false, said in the notices, when it failed (that costs the stacks, not the run).</summary>
    private bool StopStacks()
    {
        if (_stacks is null) return false;
        (Session as ICaptureGuard)?.Release(_stacks.Pid);
        if (_stacks.Stop(PerfFinish, out var problem)) return true;
        _notices.Add($"--stacks: {problem}; the report has no stacks");
        return false;
    }

    /// <summary>Commits perf's file beside the trace (trace.stacks.perf.data, which `analyze` of the trace joins).
    /// </summary>
    private void CommitStacks(string traceFile) =>
        _output.Commit(Path.GetFileName(StackFile.PathFor(traceFile)), tmp => File.Move(_stacks!.Output, tmp));

    public void Dispose()
    {
        // Whatever happened, no temporary file outlives the run; the raw capture files go with the session.
        OutputDirectory.TryDelete(ResultTemp);
        if (_stacks is not null)
        {
            _stacks.Dispose();
            OutputDirectory.TryDelete(_stacks.Output);
        }

        Session.Dispose();
    }
}

/// <summary>What a finished traced run produced.</summary>
public sealed record TracedRunFiles(RunReport Report, WorkloadResult? Result, string TraceFile);
