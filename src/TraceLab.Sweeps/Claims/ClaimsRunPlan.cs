using TraceLab.Sweeps.Calibration;

namespace TraceLab.Sweeps.Claims;

/// <summary>
/// How `claims --run` runs the predefined sweeps: 3 repeats (the least a verdict accepts), the sweeps' own sizes,
/// or with --quick smaller ones (docs/claims.md#claims-run). Results go to RESULTS/full or RESULTS/quick.
/// </summary>
public static class ClaimsRunPlan
{
    public const int Repeats = 3;

    /// <summary>The shortest point of a calibrated sweep in a --quick run (the full run: the sweep's own).</summary>
    public const double QuickMinPointSeconds = 0.1;

    /// <summary>
    /// --quick sizes: about a fifth of each sweep's work (fewer iterations, shorter computations). Verdicts from
    /// them are a first look: runs are shorter, so noisier.
    /// </summary>
    private static readonly Dictionary<string, Dictionary<string, string>> QuickSizes = new()
    {
        ["tm1"] = new() { ["iterations"] = "40000" },
        ["tm4"] = new() { ["iterations"] = "20000" },
        ["tm5"] = new() { ["iterations"] = "20000" },
        ["tm6"] = new() { ["iterations"] = "20000" },
        ["tm7"] = new() { ["iterations"] = "40000" },
        ["tm8"] = new() { ["iterations"] = "40000" },
        ["tm9"] = new() { ["iterations"] = "4000" },
        ["tm10"] = new() { ["iterations"] = "20000" },
        ["th1"] = new() { ["chunk"] = "200000" },
        ["sr"] = new() { ["duration-ms"] = "400" },
        ["tp1"] = new() { ["bias"] = "2" },
        ["tp2"] = new() { ["bias"] = "2" },
        ["tp3"] = new() { ["bias"] = "4" },
    };

    /// <summary>
    /// Wall seconds per run (process start, run, result) measured on the 2-CPU development machine with one repeat
    /// of every sweep (tm2: after calibration): the estimate printed before a run starts, until the sweep's own runs
    /// give a better one.
    /// </summary>
    private static readonly Dictionary<string, double> NominalRunSeconds = new()
    {
        ["tm1"] = 0.62,
        ["tm2"] = 2.5,
        ["tm4"] = 1.63,
        ["tm5"] = 1.19,
        ["tm6"] = 1.82,
        ["tm7"] = 0.79,
        ["tm8"] = 0.19,
        ["tm9"] = 0.65,
        ["tm10"] = 0.69,
        ["th1"] = 1.92,
        ["sr"] = 2.86,
        ["tp1"] = 2.06,
        ["tp2"] = 0.46,
        ["tp3"] = 2.0,
    };

    /// <summary>Calibration pilots of one calibrated sweep (seconds, estimate).</summary>
    public static double CalibrationSeconds(bool quick) => quick ? 5 : 30;

    /// <summary>
    /// RESULTS/full, RESULTS/quick, or with --trace RESULTS/full-traced, RESULTS/quick-traced: a traced run's times
    /// include the capture's cost, so its runs never mix with untraced ones.
    /// </summary>
    public static string ModeDirectory(string results, bool quick, bool traced = false) =>
        Path.Combine(results, (quick ? "quick" : "full") + (traced ? "-traced" : ""));

    /// <summary>The command-line flags of a mode, for the lines that say how to continue or regenerate.</summary>
    public static string Flags(bool quick, bool traced) => (quick ? " --quick" : "") + (traced ? " --trace" : "");

    /// <summary>
    /// A traced run costs more than the workload: the capture starts and stops a tracefs instance, writes trace.dat,
    /// then the run is analyzed (time ∝ events). Measured with `sweep --trace` vs untraced, load 17–19: tm1 at
    /// 40,000 iterations 1.5 s vs 0.57 s per run; a 2-thread mutex run 5.5 s vs 1.0 s (the workload itself 2.6×
    /// slower, 90 MB of trace); th1 (64 CPU-bound threads) 4.1 s vs 2.3 s. Seconds × 2 + 1 s is between them.
    /// </summary>
    public const double TracedSecondsPerRun = 1.0;

    /// <inheritdoc cref="TracedSecondsPerRun"/>
    public const double TracedSlowdown = 2.0;

    public static IReadOnlyDictionary<string, string> Overrides(SweepDefinition d, bool quick) =>
        quick && QuickSizes.TryGetValue(d.Name, out var o) ? o : new Dictionary<string, string>();

    public static IterationCalibration? Calibration(SweepDefinition d, bool quick) =>
        quick && d.Calibration is { } c ? c with { MinSeconds = QuickMinPointSeconds } : d.Calibration;

    public static double NominalSeconds(SweepDefinition d, bool quick, bool traced = false)
    {
        var full = NominalRunSeconds.GetValueOrDefault(d.Name, 1.5);
        // --quick does about a fifth of the work; process start-up (~0.1 s) does not shrink.
        var untraced = quick ? 0.1 + (full - 0.1) / 5 : full;
        return traced ? Traced(untraced) : untraced;
    }

    /// <summary>Seconds of a traced run that takes <paramref name="untracedSeconds"/> untraced.</summary>
    public static double Traced(double untracedSeconds) => TracedSecondsPerRun + untracedSeconds * TracedSlowdown;

    public static int PointCount(SweepDefinition d) =>
        d.Series.Sum(s => d.XValues.Count(x => s.OnlyX is null || s.OnlyX.Contains(x)));

    /// <summary>
    /// Why results already in a sweep folder are not of the sweep about to run (null when they are): another sweep,
    /// other points or other parameter values, traced or not. A calibrated parameter may differ: the pilots (and the
    /// re-runs of short points) chose it.
    /// </summary>
    public static string? Mismatch(SweepState state, SweepDefinition d, IReadOnlyList<SweepPoint> points,
        bool traced = false)
    {
        if (!state.Sweep.Equals(d.Name, StringComparison.OrdinalIgnoreCase) || state.Workload != d.Workload)
            return $"sweep {state.Workload} {state.Sweep}";
        if (state.Traced != traced) return state.Traced ? "traced runs" : "untraced runs";
        if (state.Points.Count != points.Count) return $"{state.Points.Count} points, the sweep now has {points.Count}";
        var calibrated = state.Calibration is not null ? d.Calibration?.Parameter : null;
        foreach (var (old, now) in state.Points.Zip(points))
        {
            if (old.Series != now.Series || old.X != now.X)
                return $"point {now.Id} is {old.Series} @ {old.X}, now {now.Series} @ {now.X}";
            foreach (var (k, v) in now.Values)
            {
                if (calibrated is not null && k.Equals(calibrated, StringComparison.OrdinalIgnoreCase)) continue;
                if (!old.Values.TryGetValue(k, out var was) || was != v)
                    return $"point {now.Id} has {k}={was ?? "(none)"}, now {v}";
            }
        }
        return null;
    }
}
