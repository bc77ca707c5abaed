namespace TraceLab.Sweeps.Claims;

/// <summary>
/// Time left in a claims run: per sweep, the runs still to do × its seconds per run — measured in this session once
/// the sweep has run some, otherwise its nominal figure scaled by how the finished sweeps compared with theirs
/// (a loaded machine runs everything slower).
/// </summary>
public sealed class ClaimsEta
{
    private readonly Dictionary<string, SweepProgress> _sweeps = new(StringComparer.Ordinal);

    private sealed class SweepProgress
    {
        public double Nominal;
        public int Left;
        public int Done;
        public double Seconds;
        public double ExtraSeconds;
    }

    /// <param name="extraSeconds">One-off cost before the runs (calibration pilots), dropped once it starts.</param>
    public void Add(string sweep, int runsLeft, double nominalSecondsPerRun, double extraSeconds = 0) =>
        _sweeps[sweep] = new SweepProgress
        {
            Nominal = nominalSecondsPerRun,
            Left = runsLeft,
            ExtraSeconds = extraSeconds,
        };

    /// <summary>Runs added to a sweep while it runs (short points of a calibrated sweep measured again).</summary>
    public void More(string sweep, int runs) => _sweeps[sweep].Left += runs;

    public void Started(string sweep) => _sweeps[sweep].ExtraSeconds = 0;

    /// <summary>A run of the sweep finished after <paramref name="seconds"/> of wall time.</summary>
    public void Finished(string sweep, double seconds)
    {
        var s = _sweeps[sweep];
        s.Left = Math.Max(0, s.Left - 1);
        s.Done++;
        s.Seconds += seconds;
    }

    public int RunsLeft => _sweeps.Values.Sum(s => s.Left);

    /// <summary>Measured ÷ nominal over the runs done so far (1 before any), bounded to [0.25, 4].</summary>
    public double Correction
    {
        get
        {
            var done = _sweeps.Values.Where(s => s.Done > 0).ToList();
            var nominal = done.Sum(s => s.Done * s.Nominal);
            return nominal <= 0 ? 1 : Math.Clamp(done.Sum(s => s.Seconds) / nominal, 0.25, 4);
        }
    }

    public TimeSpan Remaining
    {
        get
        {
            var correction = Correction;
            var seconds = _sweeps.Values.Sum(s => s.ExtraSeconds * correction
                + s.Left * (s.Done >= 3 ? s.Seconds / s.Done : s.Nominal * correction));
            return TimeSpan.FromSeconds(seconds);
        }
    }

    public static string Format(TimeSpan t) =>
        t.TotalSeconds < 90 ? $"{Math.Ceiling(t.TotalSeconds):0} s"
        : t.TotalMinutes < 90 ? $"{Math.Ceiling(t.TotalMinutes):0} min"
        : $"{(int)t.TotalHours} h {t.Minutes:00} min";
}
