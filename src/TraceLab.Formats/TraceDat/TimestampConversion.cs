namespace TraceLab.Formats.TraceDat;

/// <summary>
/// Turns a ring buffer's raw timestamps into the times trace-cmd reports, in its order: a guest file's TIME_SHIFT
/// samples first (guest clock to host clock, per CPU), then TSC2NSEC (ts * mult &gt;&gt; shift, for the tsc2nsec
/// clock, whose pages hold raw TSC counts), then the OFFSET option added. Without any of them it is the identity and
/// the reader does not call it.
/// </summary>
internal sealed class TimestampConversion
{
    /// <summary>
    /// trace-cmd computes (ts * mult) &gt;&gt; shift in two 32-bit halves, exact for shifts up to 32.
    /// </summary>
    public const int MaxShift = 32;

    private TimeShiftSamples[]? _shiftPerCpu;
    private bool _interpolate;

    public uint Mult { get; private set; }
    public int Shift { get; private set; }
    /// <summary>Nanoseconds added to every timestamp (the OFFSET option).</summary>
    public long Offset { get; set; }

    public bool IsIdentity => Mult == 0 && Offset == 0 && _shiftPerCpu is null;

    public void SetTsc2Nsec(uint mult, int shift)
    {
        Mult = mult;
        Shift = shift;
    }

    /// <param name="interpolate">
    /// TRACECMD_TSYNC_FLAG_INTERPOLATE: interpolate between samples instead of stepping.
    /// </param>
    public void SetTimeShift(TimeShiftSamples[] perCpu, bool interpolate)
    {
        _shiftPerCpu = perCpu;
        _interpolate = interpolate;
    }

    public long Convert(ulong raw, int cpu)
    {
        var ts = raw;
        if (_shiftPerCpu is not null && (uint)cpu < (uint)_shiftPerCpu.Length) ts =
            _shiftPerCpu[cpu].Apply(ts, _interpolate);
        if (Mult != 0)
        {
            var high = Math.BigMul(ts, Mult, out var low);
            ts = Shift == 0 ? low : (low >> Shift) | (high << (64 - Shift));
        }

        return unchecked((long)ts + Offset);
    }
}

/// <summary>
/// One CPU's TIME_SHIFT samples (times, offsets, scaling ratios), sorted by time with duplicates dropped.
/// </summary>
internal sealed class TimeShiftSamples
{
    private readonly long[] _times;
    private readonly long[] _offsets;
    private readonly long[] _scalings;

    public TimeShiftSamples(long[] times, long[] offsets, long[] scalings)
    {
        var order = Enumerable.Range(0, times.Length).OrderBy(i => (ulong)times[i]).ToList();
        var kept = order.Where((i, k) => k == 0 || times[i] != times[order[k - 1]]).ToArray();
        _times = kept.Select(i => times[i]).ToArray();
        _offsets = kept.Select(i => offsets[i]).ToArray();
        _scalings = kept.Select(i => scalings[i]).ToArray();
    }

    public ulong Apply(ulong ts, bool interpolate)
    {
        var n = _times.Length;
        if (n == 0) return ts;
        if (n == 1) return unchecked(ts + (ulong)_offsets[0]);
        int lo;
        if ((long)ts <= _times[0]) lo = 0;
        else if ((long)ts >= _times[n - 1]) lo = n - 2;
        else
        {
            var i = Array.BinarySearch(_times, (long)ts);
            lo = i >= 0 ? Math.Min(i, n - 2) : Math.Min(~i - 1, n - 2);
        }

        return Correct(ts, lo, lo + 1, interpolate);
    }

    private ulong Correct(ulong ts, int min, int max, bool interpolate)
    {
        long scaling, correction;
        unchecked
        {
            if (interpolate)
            {
                var delta = _times[max] - _times[min];
                var offset = ((long)ts - _times[min]) * (_offsets[max] - _offsets[min]);
                scaling = (_scalings[min] + _scalings[max]) / 2;
                correction = _offsets[min] + (delta == 0 ? 0 : (offset + delta / 2) / delta);
            }
            else
            {
                scaling = _scalings[min];
                correction = _offsets[min];
            }

            return ts * (ulong)scaling + (ulong)correction;
        }
    }
}
