using System.Globalization;

namespace TraceLab.Sweeps.Calibration;

/// <summary>
/// Runs the pilots of <see cref="IterationCalibration"/> before a sweep's first run: per series, its first point
/// (the least work per iteration, e.g. depth 1), grown until it lasts long enough to scale from; then every point
/// of the series gets the scaled count. The result is saved in state.json, so an interrupted sweep resumes with
/// the same counts and a calibration is never redone once runs exist.
/// </summary>
public sealed class SweepCalibrator(IPointRunner runner, string directory)
{
    private readonly IPointRunner _runner = runner;
    private readonly string _directory = directory;

    /// <summary>Called after each successful pilot: (series, count, the pilot's measurements).</summary>
    public Action<string, long, SweepRunRecord>? Piloted { get; init; }

    /// <summary>True when the sweep still needs its calibration: it has one, none is recorded, no run exists.</summary>
    public static bool Needed(SweepState state, IterationCalibration? calibration) =>
        calibration is not null && state.Calibration is null && state.Runs.Count == 0
        && !state.Overrides.ContainsKey(calibration.Parameter);

    public async Task CalibrateAsync(SweepState state, IterationCalibration calibration,
        CancellationToken cancellationToken)
    {
        var points = state.SweepPoints();
        var records = new List<SeriesCalibration>();
        foreach (var series in points.GroupBy(p => p.Series))
        {
            var pilot = series.First();
            var baseValue = long.Parse(pilot.Values[calibration.Parameter], CultureInfo.InvariantCulture);
            var record = await CalibrateSeries(pilot, baseValue, calibration, cancellationToken).ConfigureAwait(false);
            records.Add(record);
            foreach (var p in state.Points.Where(p => p.Series == series.Key))
                p.Values[calibration.Parameter] = record.Value.ToString(CultureInfo.InvariantCulture);
        }
        state.Calibration = records;
        SweepStateStore.Save(_directory, state);
    }

    private async Task<SeriesCalibration> CalibrateSeries(SweepPoint pilot, long baseValue, IterationCalibration c,
        CancellationToken cancellationToken)
    {
        var pilots = new List<PilotRun>();
        SeriesCalibration Result(long value) =>
            new(pilot.Series, c.Parameter, pilot.Id, c.MinSeconds, baseValue, pilots, value);
        var value = baseValue;
        for (var k = 0; k < IterationCalibration.MaxPilots; k++)
        {
            if (await Pilot(pilot, c, value, pilots, cancellationToken).ConfigureAwait(false) is not { } seconds)
                return Result(baseValue);
            if (c.Choose(value, seconds) is not null)
            {
                // Under contention one run of a point can take twice as long as the next: scale from the fastest of
                // a few pilots, the cheapest the series' iterations will be.
                for (var extra = 0; extra < IterationCalibration.ConfirmingPilots; extra++)
                {
                    if (await Pilot(pilot, c, value, pilots, cancellationToken).ConfigureAwait(false) is not { } again)
                        return Result(baseValue);
                    seconds = Math.Min(seconds, again);
                }
                return Result(IterationCalibration.Round(value * c.MinSeconds * c.Margin / seconds));
            }
            var next = c.Grow(value, seconds);
            if (next == value) break;
            value = next;
        }
        var last = pilots[^1];
        return Result(last.Seconds > 0
            ? IterationCalibration.Round(last.Value * c.MinSeconds * c.Margin / last.Seconds)
            : last.Value);
    }

    /// <returns>The pilot's elapsed seconds, or null when it failed (the sweep's runs will fail and say why).</returns>
    private async Task<double?> Pilot(SweepPoint pilot, IterationCalibration c, long value, List<PilotRun> pilots,
        CancellationToken cancellationToken)
    {
        var values = new Dictionary<string, string>(pilot.Values, StringComparer.OrdinalIgnoreCase)
        {
            [c.Parameter] = value.ToString(CultureInfo.InvariantCulture),
        };
        var dir = Path.Combine(_directory, "calibration", $"{pilot.Id}-{pilots.Count}");
        if (Directory.Exists(dir)) Directory.Delete(dir, recursive: true);
        Directory.CreateDirectory(dir);
        SweepRunRecord run;
        try
        {
            run = await _runner.RunAsync(pilot with { Values = values }, -1, dir, cancellationToken)
                .ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not OperationCanceledException || cancellationToken.IsCancellationRequested)
        {
            // A pilot stopped by an interruption did not fail: nothing is recorded, the next session calibrates.
            if (await SweepRunner.InterruptedMeanwhile(cancellationToken).ConfigureAwait(false))
                throw new OperationCanceledException(cancellationToken);
            pilots.Add(new PilotRun(value, -1));
            return null;
        }
        var seconds = run.ElapsedNs / 1e9;
        pilots.Add(new PilotRun(value, seconds));
        Piloted?.Invoke(pilot.Series, value, run);
        return seconds;
    }
}
