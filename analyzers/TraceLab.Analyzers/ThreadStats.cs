using System.Runtime.InteropServices;

namespace TraceLab.Analyzers;

/// <summary>What the scheduler did with one thread over the measured region (definitions in docs/metrics.md).</summary>
public sealed class ThreadStats
{
    public ThreadStats(int tid) => Tid = tid;

    public int Tid { get; }
    public long RunNs { get; internal set; }
    public long ReadyNs { get; internal set; }
    public long WaitNs { get; internal set; }
    public long VoluntarySwitches { get; internal set; }
    public long InvoluntarySwitches { get; internal set; }
    public long Migrations { get; internal set; }
    public long WakeupsReceived { get; internal set; }
    public long WakeupsGiven { get; internal set; }
    /// <summary>Switch-ins whose start had to be estimated because the switch naming this thread was not logged.</summary>
    public long RepairedStarts { get; internal set; }
    /// <summary>Wakeup (or preemption) to running, for switch-ins that were logged.</summary>
    public LatencyHistogram ReadyLatency { get; } = new();
    /// <summary>Waker tid → wakeups; -1 stands for wakeups from interrupt context. Keys in order of first wakeup.</summary>
    public Dictionary<int, long> Wakers
    {
        get
        {
            FlushWakers();
            return _wakers;
        }
    }

    private readonly Dictionary<int, long> _wakers = new();

    // A direct-mapped cache (by waker & mask) of wakers already in _wakers, with the wakeups not yet added there:
    // a thread is usually woken by the same few threads, so most wakeups are an index, a compare and an increment
    // instead of a dictionary lookup. Every key is inserted into _wakers at its first wakeup, as before, so the
    // dictionary's order does not change; counts are added when an entry is evicted or Wakers is read.
    private const int WakerCacheMask = 7;
    private readonly int[] _cachedWaker = new int[WakerCacheMask + 1];   // 0: empty (no waker is 0: idle counts as -1)
    private readonly long[] _cachedWakeups = new long[WakerCacheMask + 1];

    /// <summary>One wakeup of this thread by <paramref name="waker"/> (a tid, or -1 for interrupt context).</summary>
    internal void AddWakeup(int waker)
    {
        var i = waker & WakerCacheMask;
        if (_cachedWaker[i] == waker && waker != 0)
        {
            _cachedWakeups[i]++;
            return;
        }
        AddWakeupSlow(waker, i);
    }

    private void AddWakeupSlow(int waker, int i)
    {
        CollectionsMarshal.GetValueRefOrAddDefault(_wakers, waker, out _)++;
        if (waker == 0) return;
        if (_cachedWaker[i] != 0) CollectionsMarshal.GetValueRefOrAddDefault(_wakers, _cachedWaker[i], out _) += _cachedWakeups[i];
        _cachedWaker[i] = waker;
        _cachedWakeups[i] = 0;
    }

    private void FlushWakers()
    {
        for (var i = 0; i <= WakerCacheMask; i++)
        {
            if (_cachedWakeups[i] == 0) continue;
            CollectionsMarshal.GetValueRefOrAddDefault(_wakers, _cachedWaker[i], out _) += _cachedWakeups[i];
            _cachedWakeups[i] = 0;
        }
    }

    internal void Reset()
    {
        RunNs = ReadyNs = WaitNs = 0;
        VoluntarySwitches = InvoluntarySwitches = Migrations = WakeupsReceived = WakeupsGiven = RepairedStarts = 0;
        _wakers.Clear();
        Array.Clear(_cachedWaker);
        Array.Clear(_cachedWakeups);
        ReadyLatency.Clear();
    }
}
