namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// Tarjan's strongly connected components over the significant edges. Recursion is fine: with a minimum edge share
/// s there are at most 1/s significant edges (100 at 1 %), so the graph searched is tiny whatever the trace.
/// </summary>
internal sealed class KnotFinder
{
    private readonly Dictionary<int, List<int>> _successors = new();
    private readonly Dictionary<int, int> _index = new();
    private readonly Dictionary<int, int> _lowLink = new();
    private readonly Stack<int> _stack = new();
    private readonly HashSet<int> _onStack = new();
    private readonly List<List<int>> _components = new();
    private int _nextIndex;

    private KnotFinder(IEnumerable<WaitEdge> significant)
    {
        foreach (var e in significant)
        {
            if (!_successors.TryGetValue(e.From, out var list)) _successors[e.From] = list = new List<int>();
            list.Add(e.To);
        }
    }

    public static List<WaitKnot> Find(IReadOnlyList<WaitEdge> edges, long minWeightNs)
    {
        var significant = edges.Where(e => e.WeightNs >= minWeightNs && e.WeightNs > 0).ToList();
        var finder = new KnotFinder(significant);
        foreach (var v in finder._successors.Keys.ToList())
            if (!finder._index.ContainsKey(v)) finder.Connect(v);

        var knots = new List<WaitKnot>();
        foreach (var component in finder._components)
        {
            // A lone vertex is no knot: cycle protection keeps a thread from waiting on itself.
            if (component.Count < 2) continue;
            var members = component.ToHashSet();
            component.Sort();
            var internalNs = edges.Where(e => members.Contains(e.From) && members.Contains(e.To)).Sum(e => e.WeightNs);
            var isSink = !significant.Any(
                e => members.Contains(e.From) && !members.Contains(e.To) && e.To != WaitVertex.Unknown);
            knots.Add(new WaitKnot(component, internalNs, isSink));
        }
        knots.Sort((a, b) => b.InternalWeightNs.CompareTo(a.InternalWeightNs));
        return knots;
    }

    private void Connect(int v)
    {
        _index[v] = _lowLink[v] = _nextIndex++;
        _stack.Push(v);
        _onStack.Add(v);
        if (_successors.TryGetValue(v, out var next))
        {
            foreach (var w in next)
            {
                if (!_index.TryGetValue(w, out var wIndex))
                {
                    Connect(w);
                    _lowLink[v] = Math.Min(_lowLink[v], _lowLink[w]);
                }
                else if (_onStack.Contains(w))
                {
                    _lowLink[v] = Math.Min(_lowLink[v], wIndex);
                }
            }
        }
        if (_lowLink[v] != _index[v]) return;
        var component = new List<int>();
        int u;
        do
        {
            u = _stack.Pop();
            _onStack.Remove(u);
            component.Add(u);
        } while (u != v);
        _components.Add(component);
    }
}
