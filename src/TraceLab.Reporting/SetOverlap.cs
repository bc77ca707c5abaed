namespace TraceLab.Reporting;

/// <summary>
/// Whether two sets of thread ids share one, looking each id of the smaller set up in the larger: HashSet.Overlaps
/// walks its argument whole whenever they share none, and a system report checks its thousands of reported threads
/// against each of hundreds of lock objects' few participants (a fifth of the report model's time on a busy
/// perf.data; docs/performance-history.md#decode-once).
/// </summary>
internal static class SetOverlap
{
    public static bool Any(HashSet<int> a, HashSet<int> b)
    {
        var (small, large) = a.Count <= b.Count ? (a, b) : (b, a);
        foreach (var tid in small)
            if (large.Contains(tid)) return true;
        return false;
    }
}
