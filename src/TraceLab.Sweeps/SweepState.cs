using System.Text.Json;

namespace TraceLab.Sweeps;

/// <summary>
/// state.json in the sweep directory: what to run (the command's inputs, the points, the order) and what has run.
/// Rewritten atomically after every run, so an interrupted or killed sweep resumes exactly where it stopped.
/// </summary>
public sealed class SweepState
{
    public int Version { get; set; } = 1;
    /// <summary>Predefined sweep name, or "custom" with the ad-hoc description below.</summary>
    public string Sweep { get; set; } = "";
    public string Workload { get; set; } = "";
    /// <summary>For custom sweeps: the swept parameter and values, series parameter and values.</summary>
    public string? Param { get; set; }
    public List<string>? Values { get; set; }
    public string? SeriesParam { get; set; }
    public List<string>? SeriesValues { get; set; }
    public Dictionary<string, string> Overrides { get; set; } = [];
    public int Repeats { get; set; }
    public bool Traced { get; set; }
    public int OrderSeed { get; set; }
    public List<SweepPointState> Points { get; set; } = [];
    public List<PlannedRun> Order { get; set; } = [];
    public List<SweepRunRecord> Runs { get; set; } = [];
    public DateTimeOffset StartedUtc { get; set; }
    public bool Complete { get; set; }
    /// <summary>Per-series iteration counts chosen before the first run (null: none needed or not yet done).</summary>
    public List<Calibration.SeriesCalibration>? Calibration { get; set; }
    /// <summary>Points of a calibrated sweep measured again because their median was under the minimum.</summary>
    public List<Calibration.PointRerun>? Reruns { get; set; }

    public bool IsDone(PlannedRun r) => Runs.Any(x => x.Point == r.Point && x.Repeat == r.Repeat);

    public IReadOnlyList<SweepPoint> SweepPoints() =>
        Points.Select(p => new SweepPoint(p.Index, p.Series, p.X, p.Values)).ToList();
}

public sealed record SweepPointState(int Index, string Series, string X, Dictionary<string, string> Values);

public static class SweepStateStore
{
    public const string FileName = "state.json";

    /// <summary>
    /// Write to a temporary file, flush to disk, rename: a crash leaves the old or the new state, never half.
    /// </summary>
    public static void Save(string directory, SweepState state)
    {
        var final = Path.Combine(directory, FileName);
        var tmp = final + ".tmp";
        using (var fs = new FileStream(tmp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            JsonSerializer.Serialize(fs, state, SweepJsonContext.Default.SweepState);
            fs.Flush(flushToDisk: true);
        }
        File.Move(tmp, final, overwrite: true);
    }

    public static SweepState Load(string directory)
    {
        var path = Path.Combine(directory, FileName);
        if (!File.Exists(path)) throw new SweepException(
            $"{directory} has no {FileName}: not a sweep directory (or the sweep never started)");
        try
        {
            var state = JsonSerializer.Deserialize(File.ReadAllText(path), SweepJsonContext.Default.SweepState)
                ?? throw new SweepException($"{path} is empty");
            if (Damage(state) is { } why) throw new SweepException($"{path} is damaged: {why}");
            return state;
        }
        catch (JsonException ex)
        {
            throw new SweepException($"{path} is not a valid sweep state ({ex.Message})");
        }
    }

    /// <summary>
    /// What makes a parsed state unusable (JSON nulls where objects belong, points or runs referring to points that
    /// do not exist), or null: the sweep code and the claims report index points by these numbers.
    /// </summary>
    public static string? Damage(SweepState s)
    {
        if (s.Sweep is null || s.Workload is null) return "the sweep or workload name is missing";
        if (s.Points is null || s.Order is null || s.Runs is null || s.Overrides is null) return "a list is missing";
        if (s.Repeats < 0) return "negative repeats";
        for (var i = 0; i < s.Points.Count; i++)
        {
            var p = s.Points[i];
            if (p is null || p.Values is null || p.Series is null || p.X is null) return $"point {i} is incomplete";
            if (p.Index != i) return $"point {i} has index {p.Index}";
        }
        bool Known(int point) => point >= 0 && point < s.Points.Count;
        if (s.Order.Any(o => o is null || !Known(o.Point) || o.Repeat < 0))
            return "the run order refers to unknown points";
        foreach (var r in s.Runs)
        {
            if (r is null || !Known(r.Point) || r.Status is null || r.Metrics is null || r.Traced is null)
                return "a run is incomplete or refers to an unknown point";
        }
        if (s.Calibration is { } c
            && c.Any(x => x is null || x.Pilots is null || x.Parameter is null || x.Series is null))
            return "the calibration is incomplete";
        if (s.Reruns is { } reruns
            && reruns.Any(x => x is null || !Known(x.Point) || x.Parameter is null || x.Replaced is null))
            return "a re-run of a short point is incomplete or refers to an unknown point";
        return null;
    }
}
