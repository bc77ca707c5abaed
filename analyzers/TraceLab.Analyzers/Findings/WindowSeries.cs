namespace TraceLab.Analyzers.Findings;

/// <summary>
/// The time base every <see cref="WindowSeries"/> of one analysis shares: <see cref="Buckets"/> buckets of
/// <see cref="WidthNs"/> from <see cref="Origin"/>. When a time past the last bucket arrives the width doubles and
/// every series folds pairs of buckets into one, so memory stays fixed whatever the trace's length
/// (docs/metrics.md, "Findings", windows).
/// </summary>
public sealed class WindowClock
{
    public const int Buckets = 256;
    /// <summary>1 ms: a window is never shorter, so it can be drawn by the timeline at a readable scale.</summary>
    public const long InitialWidthNs = 1_000_000;

    private readonly List<WindowSeries> _series = [];

    /// <summary>Start of bucket 0 on the trace clock; <see cref="long.MinValue"/> until <see cref="Start"/>.</summary>
    public long Origin { get; private set; } = long.MinValue;
    public long WidthNs { get; private set; } = InitialWidthNs;
    public bool Started => Origin != long.MinValue;

    /// <summary>Anchors bucket 0 at <paramref name="origin"/> and empties every series.</summary>
    public void Start(long origin)
    {
        Origin = origin;
        WidthNs = InitialWidthNs;
        foreach (var s in _series) s.Clear();
    }

    public WindowSeries NewSeries()
    {
        var s = new WindowSeries(this);
        _series.Add(s);
        return s;
    }

    /// <summary>Widens the buckets until <paramref name="t"/> (≥ <see cref="Origin"/>) falls in one.</summary>
    internal void Cover(long t)
    {
        while (t - Origin >= WidthNs * Buckets)
        {
            WidthNs *= 2;
            foreach (var s in _series) s.FoldPairs();
        }
    }
}

/// <summary>Nanoseconds of one kind of evidence per time bucket of a <see cref="WindowClock"/>.</summary>
public sealed class WindowSeries
{
    private readonly WindowClock _clock;
    private readonly long[] _ns = new long[WindowClock.Buckets];

    internal WindowSeries(WindowClock clock) => _clock = clock;

    public long TotalNs { get; private set; }

    /// <summary>Adds [<paramref name="a"/>, <paramref name="b"/>) (already clipped to the region), split over the
    /// buckets it spans.</summary>
    public void AddInterval(long a, long b)
    {
        if (!_clock.Started) return;
        a = Math.Max(a, _clock.Origin);
        if (b <= a) return;
        _clock.Cover(b - 1);
        var w = _clock.WidthNs;
        var origin = _clock.Origin;
        var i = (int)((a - origin) / w);
        var j = (int)((b - 1 - origin) / w);
        TotalNs += b - a;
        if (i == j)
        {
            _ns[i] += b - a;
            return;
        }
        _ns[i] += origin + (i + 1) * w - a;
        for (var k = i + 1; k < j; k++) _ns[k] += w;
        _ns[j] += b - (origin + j * w);
    }

    internal void Clear()
    {
        Array.Clear(_ns);
        TotalNs = 0;
    }

    internal void FoldPairs()
    {
        for (var k = 0; k < WindowClock.Buckets / 2; k++) _ns[k] = _ns[2 * k] + _ns[2 * k + 1];
        Array.Clear(_ns, WindowClock.Buckets / 2, WindowClock.Buckets / 2);
    }

    /// <summary>A copy of the buckets, for the result.</summary>
    public BucketSeries Snapshot() => new(_clock.WidthNs, [.. _ns]);
}

/// <summary>
/// Evidence nanoseconds per bucket: bucket <c>i</c> covers [<c>i · WidthNs</c>, <c>(i + 1) · WidthNs</c>) after the
/// window anchor (the region's begin, or the first event when the trace has no begin marker).
/// </summary>
public sealed record BucketSeries(long WidthNs, long[] Ns)
{
    public static readonly BucketSeries Empty = new(WindowClock.InitialWidthNs, []);
}
