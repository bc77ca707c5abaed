using System.Diagnostics;
using System.Numerics;

namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// Accumulates edge weights; grows with distinct (waiter, culprit) pairs only. An open-addressing table (linear
/// probing, at most half full) keyed by the packed pair: every attributed wait adds to one or more edges, and a probe
/// here is a multiply and a compare where a <see cref="Dictionary{TKey, TValue}"/> pays hashing, a modulo and a
/// chain walk. The order of <see cref="ToList"/> is unspecified (<see cref="WaitForGraph"/> sorts).
/// </summary>
internal sealed class WaitEdgeTable
{
    private struct Entry
    {
        /// <summary>
        /// (from &lt;&lt; 32) | (uint)to; 0 marks a free entry (a waiter is a thread, from &gt; 0, so no edge packs to
        /// 0).
        /// </summary>
        public long Key;
        public long WeightNs;
        public long Count;
    }

    private Entry[] _entries = new Entry[64];
    private int _used;

    public void Add(int from, int to, long weightNs)
    {
        var key = ((long)from << 32) | (uint)to;
        Debug.Assert(from > 0, "an edge starts at a thread");
        var entries = _entries;
        var mask = entries.Length - 1;
        var i = Slot(key, entries.Length);
        while (true)
        {
            ref var e = ref entries[i];
            if (e.Key == key)
            {
                e.WeightNs += weightNs;
                e.Count++;
                return;
            }
            if (e.Key == 0) break;
            i = (i + 1) & mask;
        }
        if (2 * (_used + 1) > entries.Length)
        {
            Grow();
            Add(from, to, weightNs);
            return;
        }
        ref var fresh = ref entries[i];
        fresh.Key = key;
        fresh.WeightNs = weightNs;
        fresh.Count = 1;
        _used++;
    }

    /// <summary>
    /// Fibonacci hashing: the high bits of key × 2^64/φ spread packed (tid, tid) pairs over a power-of-two table.
    /// </summary>
    private static int Slot(long key, int length) =>
        (int)(((ulong)key * 0x9E3779B97F4A7C15UL) >> (64 - BitOperations.Log2((uint)length)));

    private void Grow()
    {
        var old = _entries;
        var entries = new Entry[old.Length * 2];
        var mask = entries.Length - 1;
        foreach (var e in old)
        {
            if (e.Key == 0) continue;
            var i = Slot(e.Key, entries.Length);
            while (entries[i].Key != 0) i = (i + 1) & mask;
            entries[i] = e;
        }
        _entries = entries;
    }

    /// <summary>Keeps the capacity: the same edges usually come back after the region begins.</summary>
    public void Clear()
    {
        Array.Clear(_entries);
        _used = 0;
    }

    public List<WaitEdge> ToList()
    {
        var list = new List<WaitEdge>(_used);
        foreach (var e in _entries)
            if (e.Key != 0) list.Add(new WaitEdge((int)(e.Key >> 32), (int)e.Key, e.WeightNs, e.Count));
        return list;
    }
}
