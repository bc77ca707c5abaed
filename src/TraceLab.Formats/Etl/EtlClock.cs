namespace TraceLab.Formats.Etl;

/// <summary>
/// Converts raw session-clock time stamps to nanoseconds since the session start:
/// (ts − T0) × 10⁹ / ticks per second, where T0 is the logfile header event's time stamp.
/// </summary>
public readonly struct EtlClock
{
    private const long NanosPerSecond = 1_000_000_000;
    private readonly long _origin;
    private readonly long _ticksPerSecond;
    /// <summary>Nanoseconds per tick when that is a whole number (10 MHz QPC: 100), else 0.</summary>
    private readonly long _wholeNanosPerTick;

    public EtlClock(long origin, long ticksPerSecond)
    {
        if (ticksPerSecond <= 0)
            throw new ArgumentOutOfRangeException(nameof(ticksPerSecond), ticksPerSecond, "must be positive");
        _origin = origin;
        _ticksPerSecond = ticksPerSecond;
        _wholeNanosPerTick = NanosPerSecond % ticksPerSecond == 0 ? NanosPerSecond / ticksPerSecond : 0;
    }

    public long ToNanoseconds(long raw)
    {
        var ticks = raw - _origin;
        if (_wholeNanosPerTick != 0) return ticks * _wholeNanosPerTick;
        var seconds = Math.DivRem(ticks, _ticksPerSecond, out var rest);
        return seconds * NanosPerSecond + (long)((Int128)rest * NanosPerSecond / _ticksPerSecond);
    }
}
