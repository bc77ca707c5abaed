namespace TraceLab.Analyzers.Waits;

/// <summary>One thread's blocked time in the measured region, split by <see cref="WaitClass"/> and by
/// <see cref="WakeSource"/> (docs/metrics.md#wait-classes).</summary>
public sealed class ThreadWaitClassStats
{
    private readonly long[] _ns = new long[WaitClasses.Count];
    private readonly long[] _waits = new long[WaitClasses.Count];
    private readonly long[] _sourceNs = new long[WakeSources.Count];

    /// <summary>Makes the (empty) statistics of thread <paramref name="tid"/>.</summary>
    public ThreadWaitClassStats(int tid) => Tid = tid;

    /// <summary>The thread.</summary>
    public int Tid { get; }

    /// <summary>Blocked time of class <paramref name="c"/>, ns.</summary>
    public long Ns(WaitClass c) => _ns[(int)c];

    /// <summary>Blocked intervals of class <paramref name="c"/>.</summary>
    public long Waits(WaitClass c) => _waits[(int)c];

    /// <summary>Blocked time ended by <paramref name="s"/>, ns.</summary>
    public long SourceNs(WakeSource s) => _sourceNs[(int)s];

    /// <summary>All classified blocked time, ns.</summary>
    public long TotalNs => _ns.Sum();

    internal void Add(WaitClass c, WakeSource s, long ns, long waits)
    {
        _ns[(int)c] += ns;
        _waits[(int)c] += waits;
        _sourceNs[(int)s] += ns;
    }

    internal void Reset()
    {
        Array.Clear(_ns);
        Array.Clear(_waits);
        Array.Clear(_sourceNs);
    }
}
