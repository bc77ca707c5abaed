using TraceLab.Analyzers;
using TraceLab.Capture.Linux;
using TraceLab.Core.Capture;
using TraceLab.Reporting;
using TraceLab.Sweeps;
using TraceLab.Workloads;

namespace TraceLab.Cli.Sweeps;

/// <summary>`sweep --trace`: every run is a full traced run (trace.dat, report.json in its run folder), measured
/// by the workload like an untraced run and, in addition, by the trace (<see cref="TracedMetrics"/>).</summary>
/// <param name="backend">Capture backend; default: the one for this OS
/// (<see cref="CaptureBackends.ForThisMachine"/>).</param>
public sealed class TracedPointRunner(WorkloadDefinition workload, string executable, string sweepName,
    IReadOnlyList<string> claims, TimeSpan timeout, ICaptureBackend? backend = null) : IPointRunner
{
    private readonly WorkloadDefinition _workload = workload;
    private readonly string _executable = executable;
    private readonly string _sweepName = sweepName;
    private readonly IReadOnlyList<string> _claims = claims;
    private readonly TimeSpan _timeout = timeout;
    private readonly ICaptureBackend _backend = backend ?? CaptureBackends.ForThisMachine();

    public int BufferKb { get; init; } = 64 * 1024;
    public SyscallSet Syscalls { get; init; } = SyscallSet.Lock;
    /// <summary>False: delete trace.dat once analyzed, keep the reports (`claims --run --trace`).</summary>
    public bool KeepTraceFile { get; init; } = true;

    public async Task<SweepRunRecord> RunAsync(
        SweepPoint point, int repeat, string runDirectory, CancellationToken cancellationToken)
    {
        var output = OutputDirectory.Prepare(runDirectory, "", force: true);
        using var capture =
            TracedCapture.Start(_backend, _workload.Name, TracedCapture.Stamp(), output, BufferKb, Syscalls);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (_timeout > TimeSpan.Zero) timeout.CancelAfter(_timeout);
        var arguments = _workload.Arguments(point.Values);
        var started = DateTimeOffset.UtcNow;
        var (exitCode, partial) = await capture.RunAsync(
            _workload.Name, _executable, arguments, (run, token) => run.WaitAsync(token), timeout.Token);
        // A run cut short by Ctrl-C is not recorded (resume redoes it); one cut short by the timeout is a failure.
        cancellationToken.ThrowIfCancellationRequested();
        if (partial) throw new WorkloadException($"timed out after {_timeout.TotalSeconds:0} s and was killed");
        var runSection = new RunSection
        {
            Workload = _workload.Name,
            Scenario = $"sweep {_sweepName} {point.Id} repeat {repeat}",
            Parameters = point.Values.ToDictionary(kv => kv.Key, kv => kv.Value),
            Claims = [.. _claims],
            Command = $"{_workload.Name} {string.Join(' ', arguments)}",
            ExitCode = exitCode,
            StartedUtc = started,
        };
        // No thread timeline: report.html of a sweep run says none was recorded (as before), and the sweep stays fast.
        var (report, result, traceFile) =
            capture.Finish(runSection, partial: false, AnalysisSelection.All, timeline: null);
        if (!KeepTraceFile) File.Delete(traceFile);
        if (result is null) throw new WorkloadException("the workload wrote no result");
        var record = RunRecords.From(result, File.ReadAllText(output.File("workload.json")));
        record.Traced = TracedMetrics.From(report);
        return record;
    }
}
