namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// Pairs of points that differ only in one parameter: every point with <c>Param = A</c> is paired with the point
/// whose values are identical except <c>Param = B</c> (e.g. which=1 vs which=3 at every thread count, or
/// active=M vs active=2M). Values are the resolved (canonical) parameter values.
/// </summary>
public sealed record PointPairs(string Param, string A, string B)
{
    public string Describe => $"{Param}={A} vs {Param}={B}";

    public IReadOnlyList<(SweepPoint A, SweepPoint B)> Find(SweepData data, Func<string, string> resolve)
    {
        var a = resolve(A);
        var b = resolve(B);
        var pairs = new List<(SweepPoint, SweepPoint)>();
        foreach (var p in data.Points.Where(p => Get(p, Param) == a))
        {
            var q = data.Points.FirstOrDefault(q => Get(q, Param) == b && SameExcept(p, q, Param));
            if (q is not null) pairs.Add((p, q));
        }
        return pairs;
    }

    private static string? Get(SweepPoint p, string name) => p.Values.TryGetValue(name, out var v) ? v : null;

    private static bool SameExcept(SweepPoint p, SweepPoint q, string param) =>
        p.Values.Count == q.Values.Count && p.Values.All(kv =>
            string.Equals(kv.Key, param, StringComparison.OrdinalIgnoreCase) || Get(q, kv.Key) == kv.Value);
}
