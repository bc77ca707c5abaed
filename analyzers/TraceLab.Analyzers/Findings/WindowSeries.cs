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
/// <remarks>
/// Only the span of buckets that were added to is kept (grown as needed): a series per thread, and a short-lived
/// thread's evidence falls in one or two buckets (all 256 took 2 KB per thread, 200 MB at 100,000 threads;
/// docs/performance.md#many-threads).
/// </remarks>
public sealed class WindowSeries
{
    private readonly WindowClock _clock;
    /// <summary>Buckets <see cref="_first"/> … <see cref="_first"/> + length − 1; none outside was added
    /// to.</summary>
    private long[] _ns = [];
    private int _first;

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
        Span(i, j);
        var ns = _ns;
        var f = _first;
        if (i == j)
        {
            ns[i - f] += b - a;
            return;
        }
        ns[i - f] += origin + (i + 1) * w - a;
        for (var k = i + 1; k < j; k++) ns[k - f] += w;
        ns[j - f] += b - (origin + j * w);
    }

    /// <summary>Makes the kept span include buckets <paramref name="i"/> … <paramref name="j"/>; it at least doubles
    /// when it grows, forward first (evidence comes in time order).</summary>
    private void Span(int i, int j)
    {
        var last = _first + _ns.Length - 1;
        if (_ns.Length > 0 && i >= _first && j <= last) return;
        var first = _ns.Length == 0 ? i : Math.Min(i, _first);
        last = _ns.Length == 0 ? j : Math.Max(j, last);
        var length = Math.Max(last - first + 1, Math.Min(WindowClock.Buckets, 2 * _ns.Length));
        last = Math.Min(WindowClock.Buckets - 1, first + length - 1);
        first = last - length + 1;
        var grown = new long[length];
        if (_ns.Length > 0) _ns.CopyTo(grown, _first - first);
        (_ns, _first) = (grown, first);
    }

    internal void Clear()
    {
        Array.Clear(_ns);
        TotalNs = 0;
    }

    internal void FoldPairs()
    {
        if (_ns.Length == 0) return;
        var first = _first / 2;
        var folded = new long[(_first + _ns.Length - 1) / 2 - first + 1];
        for (var k = 0; k < _ns.Length; k++) folded[(_first + k) / 2 - first] += _ns[k];
        (_ns, _first) = (folded, first);
    }

    /// <summary>A copy of the non-zero span of buckets, for the result.</summary>
    public BucketSeries Snapshot()
    {
        var lo = 0;
        var hi = _ns.Length - 1;
        while (lo <= hi && _ns[lo] == 0) lo++;
        while (hi >= lo && _ns[hi] == 0) hi--;
        return lo > hi ? new(_clock.WidthNs, []) : new(_clock.WidthNs, _ns[lo..(hi + 1)], _first + lo);
    }
}

/// <summary>
/// Evidence nanoseconds per bucket: <c>Ns[i]</c> is bucket <c>First + i</c>, which covers [<c>(First + i) ·
/// WidthNs</c>, <c>(First + i + 1) · WidthNs</c>) after the window anchor (the region's begin, or the first event
/// when the trace has no begin marker). Buckets outside <c>Ns</c> hold nothing.
/// </summary>
public sealed record BucketSeries(long WidthNs, long[] Ns, int First = 0)
{
    public static readonly BucketSeries Empty = new(WindowClock.InitialWidthNs, []);
}
