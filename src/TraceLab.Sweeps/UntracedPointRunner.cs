using TraceLab.Workloads;

namespace TraceLab.Sweeps;

/// <summary>Runs the native workload without tracing and reads its own measurements (workload.json).</summary>
public sealed class UntracedPointRunner(WorkloadDefinition workload, string executable, TimeSpan timeout)
    : IPointRunner
{
    private readonly WorkloadDefinition _workload = workload;
    private readonly string _executable = executable;
    private readonly TimeSpan _timeout = timeout;

    public async Task<SweepRunRecord> RunAsync(
        SweepPoint point, int repeat, string runDirectory, CancellationToken cancellationToken)
    {
        var result = Path.Combine(runDirectory, "workload.json");
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        if (_timeout > TimeSpan.Zero) timeout.CancelAfter(_timeout);
        using var run = WorkloadRun.Start(
            _executable, _workload.Arguments(point.Values), null, result, Path.Combine(runDirectory, "workload.log"));
        int code;
        try
        {
            code = await run.WaitAsync(timeout.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            throw new WorkloadException($"timed out after {_timeout.TotalSeconds:0} s and was killed");
        }
        if (code != 0)
        {
            var why = run.ErrorText();
            throw new WorkloadException($"exited with code {code}{(why.Length > 0 ? ": " + why : "")}");
        }
        return RunRecords.From(run.ReadResult(), File.ReadAllText(result));
    }
}

/// <summary>Copies a workload result's measurements into a run record.</summary>
public static class RunRecords
{
    public static SweepRunRecord From(WorkloadResult r, string json) => new()
    {
        ElapsedNs = r.ElapsedNs,
        UserNs = r.Process.UserNs,
        SystemNs = r.Process.SystemNs,
        VoluntarySwitches = r.Process.VoluntarySwitches,
        InvoluntarySwitches = r.Process.InvoluntarySwitches,
        Metrics = WorkloadMetrics.Read(json),
    };
}
