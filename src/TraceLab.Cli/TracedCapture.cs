using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Capture.Linux;
using TraceLab.Cli.Commands;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Cli;

/// <summary>
/// One workload run under a kernel capture: start the tracefs session, run the workload, write trace.dat and
/// workload.json, analyze, write report.json / report.md — the steps of TraceCommand without its console, for
/// `sweep --trace`. (TraceCommand keeps its own copy for now so concurrent work on it merges cleanly; it can call
/// this class once the capture-backend abstraction has landed.)
/// </summary>
public sealed class TracedCapture : IDisposable
{
    private static int _runsInProcess;

    private readonly OutputDirectory _output;

    private TracedCapture(LinuxCaptureSession session, OutputDirectory output, IReadOnlyList<string> notices)
    {
        Session = session;
        _output = output;
        Notices = notices;
    }

    public LinuxCaptureSession Session { get; }
    /// <summary>Stale tracefs instances removed or kept: worth telling the user, and kept in the report's warnings.</summary>
    public IReadOnlyList<string> Notices { get; }
    /// <summary>Where the workload writes its result until the run is known to be complete.</summary>
    public string ResultTemp => _output.File(".workload.json.tmp");

    public static TracedCapture Start(WorkloadDefinition workload, OutputDirectory output, int bufferKb, SyscallSet syscalls)
    {
        var stamp = DateTime.Now.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture);
        // The counter keeps two runs in one process (a sweep) from ever asking for the same instance name; the
        // "s" prefix keeps them apart from TraceCommand's own counter.
        var runId = $"{workload.Name}-{stamp}-s{Interlocked.Increment(ref _runsInProcess)}{Random.Shared.Next(0x10000):x4}";
        var session = LinuxCaptureSession.Start(new LinuxCaptureOptions
        {
            RunId = runId, WorkDirectory = output.Path, BufferSizeKb = bufferKb, Syscalls = syscalls,
        });
        var notices = session.StaleInstancesRemoved
            .Select(name => $"removed stale tracefs instance {name} left by a TraceLab run that died")
            .Concat(session.StaleInstancesKept).ToList();
        return new TracedCapture(session, output, notices);
    }

    /// <summary>
    /// Runs the workload to its end. Cancellation (Ctrl-C, timeout) kills it and returns Partial = true; a lost
    /// capture or a failing workload throws.
    /// </summary>
    public async Task<(int ExitCode, bool Partial)> RunAsync(WorkloadDefinition workload, string exe, IReadOnlyList<string> arguments,
        Func<WorkloadRun, CancellationToken, Task<int>> wait, CancellationToken cancellationToken)
    {
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, Session.CopyFailed);
        using var run = WorkloadRun.Start(exe, arguments, Session.TraceMarkerPath, ResultTemp, _output.File("workload.log"));
        int exitCode;
        try
        {
            exitCode = await wait(run, stop.Token);
        }
        catch (OperationCanceledException) when (Session.CopyFailed.IsCancellationRequested)
        {
            // WaitAsync has killed the workload: with nowhere to put the pages (a full disk, say) the capture is lost.
            Session.ThrowIfCopyFailed();
            throw;
        }
        catch (OperationCanceledException)
        {
            return (-1, true);
        }
        if (exitCode != 0)
        {
            var why = run.ErrorText();
            throw new WorkloadException($"{workload.Name} exited with code {exitCode}{(why.Length > 0 ? ": " + why : "")} (log: {_output.File("workload.log")})");
        }
        return (exitCode, false);
    }

    /// <summary>Stops the capture, writes trace.dat and workload.json, analyzes and writes the report files.</summary>
    public (RunReport Report, WorkloadResult? Result, string TraceFile) Finish(RunSection runSection, bool partial, AnalysisKind analyses)
    {
        var raw = Session.Stop();
        string traceFile;
        try
        {
            traceFile = _output.Commit("trace.dat", raw.WriteTraceDat);
        }
        finally
        {
            raw.DeleteRawFiles();
        }

        WorkloadResult? result = null;
        // A killed workload may leave an empty or half-written result: only a completed run's result counts.
        if (!partial && File.Exists(ResultTemp))
        {
            result = WorkloadResult.Parse(File.ReadAllText(ResultTemp), ResultTemp);
            _output.Commit("workload.json", tmp => File.Move(ResultTemp, tmp));
        }

        var report = AnalysisPipeline.Analyze(traceFile, result, runSection, partial, pid: null, analyses);
        report.Warnings.InsertRange(0, Notices);
        ReportFiles.Write(_output, report);
        return (report, result, traceFile);
    }

    public void Dispose()
    {
        // Whatever happened, no temporary file outlives the run; the raw page files go with the session.
        OutputDirectory.TryDelete(ResultTemp);
        Session.Dispose();
    }
}
