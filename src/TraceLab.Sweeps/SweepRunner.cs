namespace TraceLab.Sweeps;

/// <summary>
/// Executes a sweep's planned runs in order, skipping those the state already holds. A failing run is recorded
/// as failed and the sweep goes on; cancellation stops before recording the run in flight, so resuming redoes
/// only that one. The state is saved after every run.
/// </summary>
public sealed class SweepRunner
{
    private readonly string _directory;
    private readonly SweepState _state;
    private readonly IPointRunner _runner;

    public SweepRunner(string directory, SweepState state, IPointRunner runner)
    {
        _directory = directory;
        _state = state;
        _runner = runner;
    }

    /// <summary>Called before each run starts: (runs done, runs total, the point about to run).</summary>
    public Action<int, int, SweepPoint>? Starting { get; init; }
    /// <summary>Called after each run is recorded.</summary>
    public Action<int, int, SweepRunRecord>? Finished { get; init; }

    public static string RunDirectoryName(SweepPoint point, int repeat) => Path.Combine("runs", $"{point.Id}-r{repeat}");

    /// <returns>True when every planned run is recorded.</returns>
    public async Task<bool> RunAsync(CancellationToken cancellationToken)
    {
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
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                break;
            }
            catch (Exception ex)
            {
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
        _state.Complete = _state.Order.All(_state.IsDone);
        SweepStateStore.Save(_directory, _state);
        return _state.Complete;
    }

    private static string OneLine(string s) => string.Join(' ', s.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
}
