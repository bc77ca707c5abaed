namespace TraceLab.Reporting;

/// <summary>
/// Which threads a display that shows only some of them shows first: the most time blocked in lock waits (the
/// "waits" section's lock class, docs/metrics.md#wait-classes; without it, in futex, semop and semtimedop calls,
/// from the "kernel" section when syscalls were traced), then the most ready time
/// (runnable but not running), then the lower tid. A comparer of tids: the higher-ranked thread compares greater.
/// </summary>
public sealed class ThreadRanking : IComparer<int>
{
    private readonly Dictionary<int, (long LockNs, long ReadyNs)> _keys;

    private ThreadRanking(Dictionary<int, (long, long)> keys, bool classified = false)
    {
        _keys = keys;
        Classified = classified;
    }

    /// <summary>The lock key is the classified lock-wait time (the "waits" section), not time in lock calls.</summary>
    public bool Classified { get; }

    /// <summary>The ranking of the report's threads: one pass over its threads (and kernel section).</summary>
    public static ThreadRanking Of(RunReport r)
    {
        var keys = new Dictionary<int, (long LockNs, long ReadyNs)>(r.Threads.Count);
        foreach (var t in r.Threads) keys[t.Tid] = (0, t.ReadyNs);
        if (r.SectionOf(AnalysisReports.Of<Waits.WaitsReport>()) is Waits.WaitsSection waits)
        {
            // Lock waits as classified: idle waits in futex calls (a pool parked on a condition) do not rank.
            foreach (var t in waits.Threads)
                keys[t.Tid] = (t.Ns[(int)Analyzers.Waits.WaitClass.Lock], keys.GetValueOrDefault(t.Tid).ReadyNs);
            return new ThreadRanking(keys, classified: true);
        }
        foreach (var t in r.Kernel?.Threads ?? [])
        {
            long lockNs = 0;
            foreach (var s in t.Syscalls)
                if (Reporting.LockSyscalls.Contains(s.Name)) lockNs += s.BlockedNs;
            keys[t.Tid] = (lockNs, keys.GetValueOrDefault(t.Tid).ReadyNs);
        }
        return new ThreadRanking(keys);
    }

    /// <summary>Time the thread was blocked in lock waits (0 without the waits and kernel sections).</summary>
    public long LockBlockedNs(int tid) => _keys.GetValueOrDefault(tid).LockNs;

    public int Compare(int a, int b)
    {
        var ka = _keys.GetValueOrDefault(a);
        var kb = _keys.GetValueOrDefault(b);
        var c = ka.LockNs.CompareTo(kb.LockNs);
        if (c == 0) c = ka.ReadyNs.CompareTo(kb.ReadyNs);
        return c != 0 ? c : b.CompareTo(a);
    }
}
