namespace TraceLab.Analyzers.Smp;

/// <summary>
/// Running integral of the time during which at least one CPU was idle, clipped to the measured region. Keeping the
/// integral instead of per-interval bookkeeping makes the idle overlap of any interval the difference of two readings:
/// O(1) per event whatever the number of CPUs or runnable threads.
/// </summary>
internal sealed class IdleCpuIntegral(MeasuredRegion region)
{
    private readonly MeasuredRegion _region = region;
    private int _idleCpus;
    private long _at = long.MinValue;
    private long _regionBase;

    /// <summary>
    /// The integral up to the last <see cref="Advance"/>; keep it as a reading for <see cref="Since"/>.
    /// </summary>
    public long Value { get; private set; }

    /// <summary>
    /// The idle set held still since the previous call; call before applying an event's state changes.
    /// </summary>
    public void Advance(long t)
    {
        if (_at == long.MinValue)
        {
            _at = t;
            return;
        }
        if (t <= _at) return;
        if (_idleCpus > 0) Value += _region.Overlap(_at, t);
        _at = t;
    }

    public void CpuEntersIdle() => _idleCpus++;

    public void CpuLeavesIdle() => _idleCpus--;

    /// <summary>
    /// Before the begin marker the region's bounds were unknown, so readings taken then include pre-region time;
    /// remembering the value at the begin lets <see cref="Since"/> count from there instead.
    /// </summary>
    public void OnRegionBegin(long begin)
    {
        Advance(begin);
        _regionBase = Value;
    }

    /// <summary>Time inside the region with at least one idle CPU, from <paramref name="reading"/> until now.</summary>
    public long Since(long reading) => Value - Math.Max(reading, _regionBase);
}
