using System.Runtime.InteropServices;

namespace TraceLab.Analyzers.WaitGraph;

/// <summary>Accumulates edge weights; grows with distinct (waiter, culprit) pairs only.</summary>
internal sealed class WaitEdgeTable
{
    private struct Totals
    {
        public long WeightNs;
        public long Count;
    }

    private readonly Dictionary<long, Totals> _edges = new();

    public void Add(int from, int to, long weightNs)
    {
        ref var t = ref CollectionsMarshal.GetValueRefOrAddDefault(_edges, ((long)from << 32) | (uint)to, out _);
        t.WeightNs += weightNs;
        t.Count++;
    }

    /// <summary>Keeps the capacity: the same edges usually come back after the region begins.</summary>
    public void Clear() => _edges.Clear();

    public List<WaitEdge> ToList()
    {
        var list = new List<WaitEdge>(_edges.Count);
        foreach (var (key, t) in _edges) list.Add(new WaitEdge((int)(key >> 32), (int)key, t.WeightNs, t.Count));
        return list;
    }
}
