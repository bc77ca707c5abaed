namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// A set of threads waited <paramref name="WeightNs"/> on <paramref name="Vertex"/>: <paramref name="Share"/> (0..1) of
/// the set's wait time.
/// </summary>
public readonly record struct WaitedOnShare(int Vertex, long WeightNs, double Share);
