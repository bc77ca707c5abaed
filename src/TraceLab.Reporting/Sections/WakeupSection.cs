using TraceLab.Analyzers;
using TraceLab.Analyzers.Wakeups;
using TraceLab.Core;

namespace TraceLab.Reporting.Sections;

/// <summary>report.json "wakeups": who woke whom, futile and spurious wakeups, wakeup latency by CPU placement.</summary>
public sealed class WakeupSection
{
    public long FutileCpuThresholdNs { get; init; }
    /// <summary>Column heads of the matrix: the reported threads, then -1 (interrupt/idle context) and 0 (any other thread).</summary>
    public List<int> Wakers { get; init; } = [];
    public List<WakeupRowSection> Matrix { get; init; } = [];
    public List<WakeupThreadSection> Threads { get; init; } = [];
}

public sealed class WakeupRowSection
{
    public int Woken { get; init; }
    public required string Name { get; init; }
    /// <summary>Wakeups of <see cref="Woken"/> by each of <see cref="WakeupSection.Wakers"/>, same order.</summary>
    public List<long> Counts { get; init; } = [];
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
}

internal static class WakeupSectionBuilder
{
    public const int Interrupt = -1, Other = 0;

    public static WakeupSection Build(WakeupAnalyzer w, ThreadAccounting accounting, IReadOnlyList<int> tids, ThreadTable names)
    {
        var columns = tids.Concat([Interrupt, Other]).ToList();
        var index = columns.Select((tid, i) => (tid, i)).ToDictionary(x => x.tid, x => x.i);
        var matrix = new List<WakeupRowSection>();
        foreach (var tid in tids)
        {
            var counts = new long[columns.Count];
            if (accounting.Threads.TryGetValue(tid, out var s))
                foreach (var (waker, n) in s.Wakers)
                    counts[index.TryGetValue(waker, out var i) && waker != Other ? i : index[Other]] += n;
            matrix.Add(new WakeupRowSection { Woken = tid, Name = names.NameOf(tid), Counts = [.. counts] });
        }
        var threads = tids.Select(tid =>
        {
            var s = w.Threads.GetValueOrDefault(tid) ?? new WakeupStats(tid);
            return new WakeupThreadSection
            {
                Tid = tid,
                Name = names.NameOf(tid),
                Wakeups = s.Wakeups,
                Futile = s.Futile,
                FutileShare = s.Wakeups > 0 ? Math.Round((double)s.Futile / s.Wakeups, 4) : 0,
                Spurious = s.Spurious,
                SameCpuLatency = LatencySection.From(s.SameCpuLatency),
                CrossCpuLatency = LatencySection.From(s.CrossCpuLatency),
            };
        }).ToList();
        return new WakeupSection { FutileCpuThresholdNs = WakeupAnalyzer.FutileCpuNs, Wakers = columns, Matrix = matrix, Threads = threads };
    }
}
