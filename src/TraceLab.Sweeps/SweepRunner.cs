namespace TraceLab.Sweeps;

/// <summary>
/// Executes a sweep's planned runs in order, skipping those the state already holds. A failing run is recorded
/// as failed and the sweep goes on; cancellation stops before recording the run in flight, so resuming redoes
/// only that one. The state is saved after every run.
/// </summary>
public sealed class SweepRunner(string directory, SweepState state, IPointRunner runner)
{
    private readonly string _directory = directory;
    private readonly SweepState _state = state;
    private readonly IPointRunner _runner = runner;

    /// <summary>Called before each run starts: (runs done, runs total, the point about to run).</summary>
    public Action<int, int, SweepPoint>? Starting { get; init; }
    /// <summary>Called after each run is recorded.</summary>
    public Action<int, int, SweepRunRecord>? Finished { get; init; }
    /// <summary>Called when points of a calibrated sweep were too short and are measured again.</summary>
    public Action<IReadOnlyList<Calibration.PointRerun>>? Rerunning { get; init; }

    public static string RunDirectoryName(SweepPoint point, int repeat) =>
        Path.Combine("runs", $"{point.Id}-r{repeat}");

    /// <returns>True when every planned run is recorded and no point is left to measure again.</returns>
    public async Task<bool> RunAsync(CancellationToken cancellationToken)
    {
        // A calibrated sweep's short points are measured again until long enough or capped (sweeps.md#calibration).
        while (await RunOrderAsync(cancellationToken).ConfigureAwait(false)
               && !cancellationToken.IsCancellationRequested)
        {
            var reruns = Calibration.ShortPointReruns.Rerun(_state, _directory);
            if (reruns.Count == 0) break;
            Rerunning?.Invoke(reruns);
        }
        _state.Complete = _state.Order.All(_state.IsDone) && !Calibration.ShortPointReruns.Pending(_state);
        SweepStateStore.Save(_directory, _state);
        return _state.Complete;
    }

    /// <returns>True when every planned run is recorded.</returns>
    private async Task<bool> RunOrderAsync(CancellationToken cancellationToken)
    {
        // Points are read per pass: a re-run raises a point's count.
        var points = _state.SweepPoints();
        for (var seq = 0; seq < _state.Order.Count; seq++)
        {
            var planned = _state.Order[seq];
            if (_state.IsDone(planned)) continue;
            if (cancellationToken.IsCancellationRequested) break;
            var point = points[planned.Point];
            var relative = RunDirectoryName(point, planned.Repeat);
            var runDir = Path.Combine(_directory, relative);
            // A folder without a recorded run is what an interrupted attempt left: start it afresh.
            if (Directory.Exists(runDir)) Directory.Delete(runDir, recursive: true);
            Directory.CreateDirectory(runDir);
            Starting?.Invoke(_state.Runs.Count, _state.Order.Count, point);
            var started = DateTimeOffset.UtcNow;
            SweepRunRecord record;
            try
            {
                record = await _runner.RunAsync(point, planned.Repeat, runDir, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception) when (cancellationToken.IsCancellationRequested)
            {
                // Stopped or failed by the interruption (the workload may get the terminal's signal too): not a result.
                break;
            }
            catch (Exception ex)
            {
                if (await InterruptedMeanwhile(cancellationToken).ConfigureAwait(false)) break;
                record = SweepRunRecord.Failed(planned.Point, planned.Repeat, OneLine(ex.Message));
            }
            record.Point = planned.Point;
            record.Repeat = planned.Repeat;
            record.Sequence = seq;
            record.StartedUtc = started;
            record.Directory = relative.Replace('\\', '/');
            _state.Runs.Add(record);
            SweepStateStore.Save(_directory, _state);
            Finished?.Invoke(_state.Runs.Count, _state.Order.Count, record);
        }
        return _state.Order.All(_state.IsDone);
    }

    /// <summary>
    /// True when an interruption follows a failure within a moment. The workloads share TraceLab's terminal: Ctrl-C
    /// or closing the terminal signals them too, and one may die of it just before TraceLab's own handler cancels.
    /// Such a run (or pilot) is not a result: it is left unrecorded and measured again on resume.
    /// </summary>
    internal static async Task<bool> InterruptedMeanwhile(CancellationToken interruption)
    {
        try
        {
            await Task.Delay(TimeSpan.FromMilliseconds(300), interruption).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
        }
        return interruption.IsCancellationRequested;
    }

    private static string OneLine(string s) =>
        string.Join(' ', s.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
}
