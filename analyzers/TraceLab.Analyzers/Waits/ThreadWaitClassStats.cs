namespace TraceLab.Analyzers.Waits;

/// <summary>One thread's blocked time in the measured region, split by <see cref="WaitClass"/> and by
/// <see cref="WakeSource"/> (docs/metrics.md#wait-classes).</summary>
public sealed class ThreadWaitClassStats
{
    private const int WaitsAt = WaitClasses.Count, SourcesAt = 2 * WaitClasses.Count;

    /// <summary>Time by class, then waits by class, then time by source: one array per thread, not three.</summary>
    private readonly long[] _figures = new long[2 * WaitClasses.Count + WakeSources.Count];

    /// <summary>Makes the (empty) statistics of thread <paramref name="tid"/>.</summary>
    public ThreadWaitClassStats(int tid) => Tid = tid;

    /// <summary>The thread.</summary>
    public int Tid { get; }

    /// <summary>Blocked time of class <paramref name="c"/>, ns.</summary>
    public long Ns(WaitClass c) => _figures[(int)c];

    /// <summary>Blocked intervals of class <paramref name="c"/>.</summary>
    public long Waits(WaitClass c) => _figures[WaitsAt + (int)c];

    /// <summary>Blocked time ended by <paramref name="s"/>, ns.</summary>
    public long SourceNs(WakeSource s) => _figures[SourcesAt + (int)s];

    /// <summary>All classified blocked time, ns.</summary>
    public long TotalNs
    {
        get
        {
            long sum = 0;
            for (var c = 0; c < WaitClasses.Count; c++) sum += _figures[c];
            return sum;
        }
    }

    internal void Add(WaitClass c, WakeSource s, long ns, long waits)
    {
        _figures[(int)c] += ns;
        _figures[WaitsAt + (int)c] += waits;
        _figures[SourcesAt + (int)s] += ns;
    }

    internal void Reset()
    {
        Array.Clear(_figures);
    }
}
