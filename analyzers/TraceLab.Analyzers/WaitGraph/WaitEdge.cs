namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// <paramref name="From"/> (a thread) spent <paramref name="WeightNs"/> of its in-region wait time waiting on
/// <paramref name="To"/>, directly or through cascading; <paramref name="Count"/> of its waits contributed.
/// </summary>
public readonly record struct WaitEdge(int From, int To, long WeightNs, long Count);
