namespace TraceLab.Sweeps.Calibration;

/// <summary>
/// Raises a sweep's iteration count per series so that every point runs long enough to time on a shared machine:
/// a point that lasts a few milliseconds moves by tens of percent with one preemption, and its verdicts end
/// undecided (docs/sweeps.md#calibration).
/// </summary>
/// <param name="Parameter">The workload parameter scaled (timemutex: iterations per thread).</param>
/// <param name="MinSeconds">The shortest elapsed time a point should have.</param>
/// <param name="Margin">
/// The pilot point is aimed at <c>MinSeconds × Margin</c>: the other points of the series do more work per
/// iteration (deeper nesting), but runs of one point still differ by up to ~2× under contention.
/// </param>
public sealed record IterationCalibration(string Parameter, double MinSeconds, double Margin = 2)
{
    /// <summary>
    /// A pilot shorter than this share of <see cref="MinSeconds"/> is too noisy to scale from: grow and rerun. Short
    /// runs also understate the cost per iteration (threads start one after another and barely contend).
    /// </summary>
    public const double PilotShare = 1;

    /// <summary>Most pilot runs per series before giving up and scaling from the last one.</summary>
    public const int MaxPilots = 5;

    /// <summary>Pilots run again at the first long-enough count; the fastest of them sets the scale.</summary>
    public const int ConfirmingPilots = 2;

    /// <summary>Upper bound of the scaled value (the workloads take a 32-bit count).</summary>
    public const long MaxValue = 1_000_000_000;

    /// <summary>
    /// The count for the series from a pilot of <paramref name="pilotValue"/> lasting <paramref name="pilotSeconds"/>,
    /// or null when the pilot was too short to scale from (then run <see cref="Grow"/>'s count next). A series whose
    /// pilot already lasts longer than the aim is scaled down too: that bounds the sweep's duration (tm2's mutex
    /// series at depth 10 would otherwise run for many seconds per point).
    /// </summary>
    public long? Choose(long pilotValue, double pilotSeconds)
    {
        if (pilotSeconds < MinSeconds * PilotShare) return null;
        return Round(pilotValue * MinSeconds * Margin / pilotSeconds);
    }

    /// <summary>The next pilot's count after a pilot too short to scale from (at most ×100 per step).</summary>
    public long Grow(long pilotValue, double pilotSeconds)
    {
        var factor = pilotSeconds <= 0 ? 100 : Math.Clamp(MinSeconds * Margin / pilotSeconds, 2, 100);
        return Round(pilotValue * factor);
    }

    /// <summary>Two significant digits, rounded up ("at least" still holds), at most <see cref="MaxValue"/>.</summary>
    public static long Round(double value)
    {
        if (value >= MaxValue) return MaxValue;
        if (value <= 1) return 1;
        var step = Math.Pow(10, Math.Max(0, Math.Floor(Math.Log10(value)) - 1));
        return Math.Min(MaxValue, (long)(Math.Ceiling(value / step - 1e-9) * step));
    }
}

/// <summary>One series' calibration, kept in state.json: a resumed sweep reuses it, the report cites it.</summary>
public sealed record SeriesCalibration(string Series, string Parameter, string PilotPoint, double MinSeconds,
    long BaseValue, List<PilotRun> Pilots, long Value);

/// <summary>One pilot run: the count it ran with and how long it took (seconds; −1 when it failed).</summary>
public sealed record PilotRun(long Value, double Seconds);
