using System.Globalization;

namespace TraceLab.Sweeps.Calibration;

/// <summary>
/// The guarantee behind calibration (docs/sweeps.md#calibration): pilots only estimate a series' cost, and under
/// load runs of one point differ by 2–3×, so once every planned run of a calibrated sweep is recorded, a point whose
/// median elapsed is under its series' minimum is measured again — all its repeats — with its count scaled from its
/// own fastest run. Its earlier runs are kept in state.json (<see cref="PointRerun.Replaced"/>) and their folders
/// moved to <c>replaced/</c>. A point stays short only when a cap is hit (<see cref="MaxRounds"/> re-runs, or the
/// largest count a workload takes); <see cref="Warning"/> names it for the reports.
/// </summary>
public static class ShortPointReruns
{
    /// <summary>Most re-runs of one point: each one at least doubles its count, so three are ×8 or more.</summary>
    public const int MaxRounds = 3;

    /// <summary>A re-run aims its fastest run at the minimum × this (the noise that made it short remains).</summary>
    public const double Margin = 2;

    /// <summary>At most this factor per re-run (a point whose fastest run took ~0 s is not scaled unbounded).</summary>
    public const double MaxFactor = 100;

    public const string ReplacedFolder = "replaced";

    /// <summary>A point under its series' minimum: its median, its fastest run, whether it can be re-run.</summary>
    public sealed record ShortPoint(int Point, string Parameter, long Value, double MinSeconds, double MedianSeconds,
        double FastestSeconds, int Rounds)
    {
        public bool CountCapped => Value >= IterationCalibration.MaxValue;
        public bool CanRerun => Rounds < MaxRounds && !CountCapped;

        public long NextValue => IterationCalibration.Round(
            Value * Math.Min(MaxFactor, MinSeconds * Margin / Math.Max(FastestSeconds, 1e-9)));
    }

    /// <summary>
    /// Every point of a calibrated series whose planned runs are all recorded and whose median elapsed (over its
    /// successful runs) is under the series' minimum. None for a sweep without calibration (e.g. --iterations given).
    /// </summary>
    public static IReadOnlyList<ShortPoint> Find(SweepState state)
    {
        if (state.Calibration is not { Count: > 0 } calibration) return [];
        var result = new List<ShortPoint>();
        foreach (var p in state.Points)
        {
            var series = calibration.FirstOrDefault(c => c.Series == p.Series);
            if (series is null || !p.Values.TryGetValue(series.Parameter, out var text)
                || !long.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value)) continue;
            if (!state.Order.Where(o => o.Point == p.Index).All(state.IsDone)) continue;
            var elapsed = state.Runs.Where(r => r.Point == p.Index && r.Ok).Select(r => r.ElapsedNs / 1e9).ToList();
            if (Summary.Of(elapsed) is not { } s || s.Median >= series.MinSeconds) continue;
            var rounds = state.Reruns?.Count(r => r.Point == p.Index) ?? 0;
            result.Add(new ShortPoint(p.Index, series.Parameter, value, series.MinSeconds, s.Median, s.Min, rounds));
        }
        return result;
    }

    /// <summary>True when <see cref="Rerun"/> has points to measure again.</summary>
    public static bool Pending(SweepState state) => Find(state).Any(p => p.CanRerun);

    /// <summary>
    /// Schedules every short point that may be re-run: its runs leave <see cref="SweepState.Runs"/> (kept in the
    /// re-run record), its count is raised, its run folders move to <c>replaced/</c>, and the state is saved, so the
    /// sweep's planned order runs exactly those points again. Deterministic from the state: a crash before the save
    /// decides the same again on resume (a folder already moved is skipped).
    /// </summary>
    /// <returns>The re-runs scheduled (empty: nothing to do).</returns>
    public static IReadOnlyList<PointRerun> Rerun(SweepState state, string directory)
    {
        var scheduled = new List<PointRerun>();
        foreach (var p in Find(state).Where(p => p.CanRerun))
        {
            var round = p.Rounds + 1;
            var replaced = state.Runs.Where(r => r.Point == p.Point).ToList();
            foreach (var run in replaced) run.Directory = MoveAway(directory, run.Directory, round);
            state.Runs.RemoveAll(r => r.Point == p.Point);
            var next = p.NextValue;
            state.Points[p.Point].Values[p.Parameter] = next.ToString(CultureInfo.InvariantCulture);
            scheduled.Add(new PointRerun(p.Point, round, p.Parameter, p.Value, next, p.MinSeconds, p.MedianSeconds,
                p.FastestSeconds, replaced));
        }
        if (scheduled.Count == 0) return scheduled;
        (state.Reruns ??= []).AddRange(scheduled);
        state.Complete = false;
        SweepStateStore.Save(directory, state);
        return scheduled;
    }

    private static string? MoveAway(string directory, string? relative, int round)
    {
        if (relative is null) return null;
        var target = $"{ReplacedFolder}/{Path.GetFileName(relative)}-{round}";
        var from = Path.Combine(directory, relative);
        var to = Path.Combine(directory, target);
        if (Directory.Exists(from))
        {
            if (Directory.Exists(to)) Directory.Delete(to, recursive: true);
            Directory.CreateDirectory(Path.GetDirectoryName(to)!);
            Directory.Move(from, to);
        }
        return target;
    }

    /// <summary>
    /// One line naming every point under its calibrated minimum, for report.md, sweep.json and the claims report:
    /// those that hit a cap, and those still to be measured again (results of a version without re-runs, or an
    /// interrupted sweep), or null when there are none.
    /// </summary>
    public static string? Warning(SweepState state, IReadOnlyList<SweepPoint> points)
    {
        var shortPoints = Find(state);
        if (shortPoints.Count == 0) return null;
        var list = string.Join("; ", shortPoints.Select(u => $"{points[u.Point].Id} "
            + $"({points[u.Point].Series} @ {points[u.Point].X}) "
            + string.Create(CultureInfo.InvariantCulture, $"median {u.MedianSeconds:0.###} s at ")
            + string.Create(CultureInfo.InvariantCulture, $"{u.Parameter} {u.Value:#,0}: ")
            + (u.CanRerun ? "to be measured again by the next run (resume)"
                : u.CountCapped ? "stays, at the largest count a workload takes"
                : string.Create(CultureInfo.InvariantCulture, $"stays, after {u.Rounds} re-runs (the most allowed)"))));
        return string.Create(CultureInfo.InvariantCulture,
            $"under the calibrated minimum of {shortPoints[0].MinSeconds:0.##} s: {shortPoints.Count} point(s): ")
            + list;
    }
}

/// <summary>
/// One point measured again because its median elapsed was under the minimum: the count before and after, the
/// figures that triggered it, and the runs it replaced (kept for the record; no statistic reads them).
/// </summary>
public sealed record PointRerun(int Point, int Round, string Parameter, long FromValue, long ToValue,
    double MinSeconds, double MedianSeconds, double FastestSeconds, List<SweepRunRecord> Replaced);
