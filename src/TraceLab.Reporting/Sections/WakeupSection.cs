using TraceLab.Analyzers;
using TraceLab.Analyzers.Wakeups;
using TraceLab.Core;

namespace TraceLab.Reporting.Sections;

/// <summary>
/// report.json "wakeups": who woke whom, futile and spurious wakeups, wakeup latency by CPU placement.
/// </summary>
public sealed class WakeupSection
{
    public long FutileCpuThresholdNs { get; init; }
    /// <summary>
    /// Column heads of the matrix: its threads (the <see cref="WakeupSectionBuilder.MatrixThreads"/> reported threads
    /// woken most, in report order: all of them in a small process), then -1 (interrupt/idle context) and 0 (any other
    /// thread). The matrix is a view for people; every thread's wakers are in
    /// <see cref="WakeupThreadSection.WokenBy"/>.
    /// </summary>
    public List<int> Wakers { get; init; } = [];
    public List<WakeupRowSection> Matrix { get; init; } = [];
    /// <summary>Reported threads left out of the matrix (0 when it has them all).</summary>
    public int ThreadsNotInMatrix { get; init; }
    public List<WakeupThreadSection> Threads { get; init; } = [];
}

public sealed class WakeupRowSection
{
    public int Woken { get; init; }
    public required string Name { get; init; }
    /// <summary>Wakeups of <see cref="Woken"/> by each of <see cref="WakeupSection.Wakers"/>, same order.</summary>
    public List<long> Counts { get; init; } = [];
}

/// <summary>One partner of a thread in who-woke-whom, sparse: a tid (-1: interrupt/idle context) and a count.</summary>
public sealed class WakePartnerSection
{
    public int Tid { get; init; }
    public long Count { get; init; }
}

public sealed class WakeupThreadSection
{
    public int Tid { get; init; }
    public required string Name { get; init; }
    public long Wakeups { get; init; }
    public long Futile { get; init; }
    public double FutileShare { get; init; }
    public long Spurious { get; init; }
    public required LatencySection SameCpuLatency { get; init; }
    public required LatencySection CrossCpuLatency { get; init; }
    /// <summary>Every waker of this thread in the region with its count, most first (sparse: no zeros).</summary>
    public List<WakePartnerSection> WokenBy { get; init; } = [];
    /// <summary>
    /// The reported threads this thread woke most (at most <see cref="WakeupSectionBuilder.TopWakees"/>), most first;
    /// each is also in that thread's <see cref="WokenBy"/>.
    /// </summary>
    public List<WakePartnerSection> TopWakees { get; init; } = [];
}

internal static class WakeupSectionBuilder
{
    public const int Interrupt = -1, Other = 0;

    /// <summary>Rows and thread columns of the who-woke-whom matrix: a dense view only for the top threads.</summary>
    public const int MatrixThreads = 10;

    /// <summary>Wakees listed per thread (its wakers are all listed, in the woken thread's entry).</summary>
    public const int TopWakees = 5;

    public static WakeupSection Build(
        WakeupAnalyzer w, ThreadAccounting accounting, IReadOnlyList<int> tids, ThreadTable names)
    {
        // Each reported thread's wakers, sparse and sorted once: the matrix, wokenBy and the wakees all read these.
        var wokenBy = new Dictionary<int, List<WakePartnerSection>>(tids.Count);
        var wakees = new Dictionary<int, List<WakePartnerSection>>();
        foreach (var tid in tids)
        {
            var list = new List<WakePartnerSection>();
            if (accounting.Threads.TryGetValue(tid, out var s))
            {
                foreach (var (waker, n) in s.Wakers)
                {
                    if (n == 0) continue;
                    list.Add(new WakePartnerSection { Tid = waker, Count = n });
                    if (!wakees.TryGetValue(waker, out var woke)) wakees[waker] = woke = [];
                    woke.Add(new WakePartnerSection { Tid = tid, Count = n });
                }
            }
            list.Sort(ByCountThenTid);
            wokenBy[tid] = list;
        }

        var inMatrix = MatrixRows(tids, wokenBy);
        var columns = inMatrix.Concat([Interrupt, Other]).ToList();
        var index = new Dictionary<int, int>(columns.Count);
        for (var i = 0; i < columns.Count; i++) index[columns[i]] = i;
        var matrix = new List<WakeupRowSection>(inMatrix.Count);
        foreach (var tid in inMatrix)
        {
            var counts = new long[columns.Count];
            foreach (var p in wokenBy[tid])
                counts[index.TryGetValue(p.Tid, out var i) && p.Tid != Other ? i : index[Other]] += p.Count;
            matrix.Add(new WakeupRowSection { Woken = tid, Name = names.NameOf(tid), Counts = [.. counts] });
        }

        var threads = new List<WakeupThreadSection>(tids.Count);
        foreach (var tid in tids)
        {
            var s = w.Threads.GetValueOrDefault(tid) ?? new WakeupStats(tid);
            threads.Add(new WakeupThreadSection
            {
                Tid = tid,
                Name = names.NameOf(tid),
                Wakeups = s.Wakeups,
                Futile = s.Futile,
                FutileShare = s.Wakeups > 0 ? Math.Round((double)s.Futile / s.Wakeups, 4) : 0,
                Spurious = s.Spurious,
                SameCpuLatency = LatencySection.From(s.SameCpuLatency),
                CrossCpuLatency = LatencySection.From(s.CrossCpuLatency),
                WokenBy = wokenBy[tid],
                TopWakees = wakees.TryGetValue(tid, out var woke) ? Top(woke, TopWakees) : [],
            });
        }
        return new WakeupSection
        {
            FutileCpuThresholdNs = WakeupAnalyzer.FutileCpuNs,
            Wakers = columns,
            Matrix = matrix,
            ThreadsNotInMatrix = tids.Count - inMatrix.Count,
            Threads = threads,
        };
    }

    /// <summary>
    /// The matrix's threads: all when they are few, else the <see cref="MatrixThreads"/> woken most (ties: lower
    /// tid), kept in report order so the matrix reads like the other tables.
    /// </summary>
    private static List<int> MatrixRows(IReadOnlyList<int> tids, Dictionary<int, List<WakePartnerSection>> wokenBy)
    {
        if (tids.Count <= MatrixThreads) return [.. tids];
        long Received(int tid) => wokenBy[tid].Sum(p => p.Count);
        var top = tids.Select(tid => (tid, n: Received(tid)))
            .OrderByDescending(x => x.n).ThenBy(x => x.tid).Take(MatrixThreads).Select(x => x.tid).ToHashSet();
        return tids.Where(top.Contains).ToList();
    }

    private static List<WakePartnerSection> Top(List<WakePartnerSection> list, int n)
    {
        list.Sort(ByCountThenTid);
        return list.Count <= n ? list : list.GetRange(0, n);
    }

    private static int ByCountThenTid(WakePartnerSection a, WakePartnerSection b)
    {
        var c = b.Count.CompareTo(a.Count);
        return c != 0 ? c : a.Tid.CompareTo(b.Tid);
    }
}
