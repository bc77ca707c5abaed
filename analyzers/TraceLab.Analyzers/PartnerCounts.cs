using System.Runtime.InteropServices;

namespace TraceLab.Analyzers;

/// <summary>
/// Counts per partner thread (tid → count) in a <see cref="Dictionary{TKey, TValue}"/> whose keys are in order of
/// first count, with a direct-mapped cache (by tid &amp; mask) in front: a thread deals with the same few partners over
/// and over, so most counts are an index, a compare and an increment instead of a hashed lookup. A key is inserted
/// into the dictionary at its first count, as without the cache, so the order does not change; cached counts are
/// added when their entry is evicted or <see cref="Counts"/> is read. The cache is allocated only after
/// <see cref="UncachedAdds"/> counts: most threads of a whole-system trace are counted once or twice.
/// </summary>
internal sealed class PartnerCounts
{
    private const int Mask = 7;
    /// <summary>Counts taken through the dictionary before the cache is allocated (144 bytes per thread).</summary>
    private const int UncachedAdds = 4;
    /// <summary>The cache of every instance that has none yet: all tids 0 (empty), so nothing hits it; never
    /// written.</summary>
    private static readonly int[] NoCachedTids = new int[Mask + 1];
    private static readonly long[] NoCachedCounts = new long[Mask + 1];
    private readonly Dictionary<int, long> _counts = new();
    private int[] _cachedTid = NoCachedTids;     // 0: empty (0 itself is counted without the cache)
    private long[] _cachedCount = NoCachedCounts;
    private int _uncached;

    /// <summary>The counts, the cached ones included.</summary>
    public Dictionary<int, long> Counts
    {
        get
        {
            Flush();
            return _counts;
        }
    }

    public void Add(int tid)
    {
        var i = tid & Mask;
        if (_cachedTid[i] == tid && tid != 0)
        {
            _cachedCount[i]++;
            return;
        }
        AddSlow(tid, i);
    }

    private void AddSlow(int tid, int i)
    {
        CollectionsMarshal.GetValueRefOrAddDefault(_counts, tid, out _)++;
        if (tid == 0) return;
        if (ReferenceEquals(_cachedTid, NoCachedTids))
        {
            if (++_uncached < UncachedAdds) return;
            _cachedTid = new int[Mask + 1];
            _cachedCount = new long[Mask + 1];
        }
        if (_cachedTid[i] != 0)
            CollectionsMarshal.GetValueRefOrAddDefault(_counts, _cachedTid[i], out _) += _cachedCount[i];
        _cachedTid[i] = tid;
        _cachedCount[i] = 0;
    }

    private void Flush()
    {
        for (var i = 0; i <= Mask; i++)
        {
            if (_cachedCount[i] == 0) continue;
            CollectionsMarshal.GetValueRefOrAddDefault(_counts, _cachedTid[i], out _) += _cachedCount[i];
            _cachedCount[i] = 0;
        }
    }

    public void Clear()
    {
        _counts.Clear();
        _cachedTid = NoCachedTids;
        _cachedCount = NoCachedCounts;
        _uncached = 0;
    }
}
