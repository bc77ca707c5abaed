using System.Globalization;
using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Timeline;

namespace TraceLab.Reporting.Findings;

/// <summary>What every rule reads: the report's sections, the findings evidence, and the severity
/// denominator.</summary>
public sealed class FindingContext
{
    /// <summary>Windows listed per finding, at most.</summary>
    public const int MaxWindows = 3;

    public FindingContext(RunReport report, FindingEvidence? evidence)
    {
        Report = report;
        Evidence = evidence;
        Reported = report.Threads.Select(t => t.Tid).ToHashSet();
        ThreadTimeNs = report.Threads.Sum(t => t.RunNs + t.ReadyNs + t.WaitNs);
    }

    /// <summary>Reported threads by tid, built on first use (rules name threads one at a time).</summary>
    private Dictionary<int, ThreadSection>? _byTid;

    public RunReport Report { get; }
    /// <summary>Null when the evidence collector did not run (rules that need it raise nothing).</summary>
    public FindingEvidence? Evidence { get; }
    public IReadOnlySet<int> Reported { get; }
    /// <summary>Σ run + ready + wait over the reported threads: the denominator of every severity.</summary>
    public long ThreadTimeNs { get; }

    public double Share(double ns) => ThreadTimeNs > 0 ? Math.Clamp(ns / ThreadTimeNs, 0, 1) : 0;

    public string NameOf(int tid) =>
        (_byTid ??= Report.Threads.GroupBy(t => t.Tid).ToDictionary(g => g.Key, g => g.First()))
            .TryGetValue(tid, out var t)
            ? $"{t.Name} ({tid}{(t.Role is null ? "" : ", " + t.Role)})"
            : tid.ToString(CultureInfo.InvariantCulture);

    /// <summary>
    /// The worst buckets of the summed <paramref name="series"/>, heaviest first, adjacent picks merged into one
    /// window,
    /// from the window anchor.
    /// </summary>
    public static List<TimelineWindow> Windows(params BucketSeries[] series)
    {
        var used = series.Where(s => s.Ns.Length > 0).ToList();
        if (used.Count == 0) return [];
        var width = used[0].WidthNs;
        var n = used.Max(s => s.First + s.Ns.Length);
        var sum = new long[n];
        foreach (var s in used.Where(s => s.WidthNs == width))
            for (var i = 0; i < s.Ns.Length; i++) sum[s.First + i] += s.Ns[i];
        var picks = Enumerable.Range(0, n).Where(i => sum[i] > 0)
            .OrderByDescending(i => sum[i]).ThenBy(i => i).Take(MaxWindows).ToHashSet();
        var windows = new List<(long Weight, int First, int Count)>();
        foreach (var i in picks.Order())
        {
            if (windows.Count > 0 && windows[^1].First + windows[^1].Count == i)
                windows[^1] = (windows[^1].Weight + sum[i], windows[^1].First, windows[^1].Count + 1);
            else windows.Add((sum[i], i, 1));
        }
        return windows.OrderByDescending(w => w.Weight).ThenBy(w => w.First)
            .Select(w => new TimelineWindow(w.First * width, w.Count * width)).ToList();
    }
}
