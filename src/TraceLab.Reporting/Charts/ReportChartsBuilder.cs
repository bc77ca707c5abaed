using TraceLab.Analyzers;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Timeline;

namespace TraceLab.Reporting.Charts;

/// <summary>
/// The data of report.html's charts, from the finished analyses (docs/metrics.md, "Charts"). Each chart shows the
/// top few threads or objects only, so its size and rendering cost are bounded by what is shown, not by the trace.
/// </summary>
public static class ReportChartsBuilder
{
    public const int LatencyThreads = 6;
    public const int HandoffObjects = 4;
    public const int HeatmapThreads = 10;
    public const int StateThreads = 16;
    public const int StateBuckets = 40;

    /// <summary>Every chart's file stem (chart-NAME.png and .svg).</summary>
    public static readonly IReadOnlyList<string> Names =
        ["chart-thread-states", "chart-ready-latency", "chart-handoff-gaps", "chart-wakers"];

    public static ReportCharts Build(ReportContext context, TimelineData? timeline)
    {
        var names = context.Names;
        string Label(int tid) => $"{names.NameOf(tid)} ({tid})";
        return new ReportCharts(
            ReadyLatency(context.Tids, tid => context.Accounting.Threads.GetValueOrDefault(tid), Label),
            context.Session.Convoys is { } convoys ? HandoffGaps(convoys.Objects, context.Tids) : null,
            Wakers(context.Tids, tid => context.Accounting.Threads.GetValueOrDefault(tid), Label),
            timeline is null ? null : States(timeline, context.Tids));
    }

    /// <summary>The threads that waited longest for a CPU (ready time), one histogram each.</summary>
    public static HistogramChart? ReadyLatency(IEnumerable<int> tids, Func<int, ThreadStats?> stats,
        Func<int, string> label)
    {
        var ranked = tids.Select(stats).OfType<ThreadStats>().Where(s => s.ReadyLatency.Count > 0)
            .OrderByDescending(s => s.ReadyNs).ThenBy(s => s.Tid).ToList();
        if (ranked.Count == 0) return null;
        var series = ranked.Take(LatencyThreads)
            .Select(s => new HistogramSeries(label(s.Tid), LogBins.From(s.ReadyLatency), s.ReadyLatency.Count))
            .ToList();
        return new HistogramChart("chart-ready-latency", "Ready latency per thread (wakeup or preemption → running)",
            "ready latency", series, ranked.Count - series.Count);
    }

    /// <summary>The objects with the most handoffs among the reported threads, one histogram of gaps each.</summary>
    public static HistogramChart? HandoffGaps(IEnumerable<LockObjectStats> objects, IReadOnlyCollection<int> tids)
    {
        var selected = tids.ToHashSet();
        var ranked = objects.Where(o => o.HandoffGap.Count > 0 && SetOverlap.Any(o.Participants, selected))
            .OrderByDescending(o => o.Handoffs).ThenBy(o => o.Object.ToString(), StringComparer.Ordinal).ToList();
        if (ranked.Count == 0) return null;
        var series = ranked.Take(HandoffObjects)
            .Select(o => new HistogramSeries(o.Object.ToString(), LogBins.From(o.HandoffGap), o.HandoffGap.Count))
            .ToList();
        return new HistogramChart("chart-handoff-gaps",
            "Lock handoff gap per object (lock granted → new owner running)", "handoff gap", series,
            ranked.Count - series.Count);
    }

    /// <summary>
    /// Who woke whom among the threads that received the most wakeups: rows are those wakees, columns their wakers
    /// (the same top threads, plus "others" and interrupt context when they woke any of them).
    /// </summary>
    public static HeatmapChart? Wakers(IEnumerable<int> tids, Func<int, ThreadStats?> stats, Func<int, string> label)
    {
        var ranked = tids.Select(stats).OfType<ThreadStats>().Where(s => s.Wakers.Count > 0)
            .OrderByDescending(s => s.Wakers.Values.Sum()).ThenBy(s => s.Tid).ToList();
        if (ranked.Count == 0) return null;
        var top = ranked.Take(HeatmapThreads).ToList();
        var columns = top.Select(s => s.Tid).ToList();
        const int Others = int.MinValue, Irq = -1;
        bool any(Func<int, bool> keep) => top.Any(s => s.Wakers.Keys.Any(keep));
        if (any(w => w != Irq && !columns.Contains(w))) columns.Add(Others);
        if (any(w => w == Irq)) columns.Add(Irq);
        var index = columns.Select((tid, i) => (tid, i)).ToDictionary(x => x.tid, x => x.i);
        var cells = top.Select(s =>
        {
            var row = new long[columns.Count];
            foreach (var (waker, n) in s.Wakers)
                row[index.TryGetValue(waker, out var i) ? i : index[Others]] += n;
            return row;
        }).ToArray();
        var wakerLabels = columns.Select(c => c switch { Others => "other threads", Irq => "<irq>", _ => label(c) })
            .ToList();
        return new HeatmapChart("chart-wakers", "Who woke whom (wakeups in the region)",
            top.Select(s => label(s.Tid)).ToList(), wakerLabels, cells, ranked.Count - top.Count);
    }

    /// <summary>
    /// The timeline window's segments of the busiest shown threads, summed per bucket and state: the stacked bars'
    /// heights are thread counts (all of a bar's layers add up to the threads present in the bucket).
    /// </summary>
    public static StateBarsChart? States(TimelineData timeline, IReadOnlyCollection<int> tids)
    {
        var length = timeline.End - timeline.Start;
        if (length <= 0 || timeline.Segments.Count == 0) return null;
        var selected = tids.ToHashSet();
        var busy = new Dictionary<int, long>();
        foreach (var s in timeline.Segments)
            if (selected.Contains(s.Tid) && s.State != ThreadRunState.Blocked)
                busy[s.Tid] = busy.GetValueOrDefault(s.Tid) + (s.End - s.Start);
        var present = timeline.Segments.Where(s => selected.Contains(s.Tid)).Select(s => s.Tid).Distinct().ToList();
        if (present.Count == 0) return null;
        var shown = present.OrderByDescending(t => busy.GetValueOrDefault(t)).ThenBy(t => t).Take(StateThreads)
            .ToHashSet();
        var bucket = Math.Max(1, (length + StateBuckets - 1) / StateBuckets);
        var count = (int)((length + bucket - 1) / bucket);
        var ns = new long[3][];
        for (var k = 0; k < 3; k++) ns[k] = new long[count];
        foreach (var s in timeline.Segments)
        {
            if (!shown.Contains(s.Tid)) continue;
            var a = Math.Max(s.Start, timeline.Start) - timeline.Start;
            var b = Math.Min(s.End, timeline.End) - timeline.Start;
            for (var i = (int)(a / bucket); a < b && i < count; i++)
            {
                var end = Math.Min(b, (i + 1) * bucket);
                ns[(int)s.State][i] += end - a;
                a = end;
            }
        }
        string[] names = ["running", "runnable", "blocked"];
        var layers = Enumerable.Range(0, 3)
            .Select(k => new StateLayer(names[k], ns[k].Select((v, i) => v / (double)BucketWidth(i)).ToArray()))
            .ToList();
        return new StateBarsChart("chart-thread-states", "Thread states over time (timeline window)",
            timeline.Start - timeline.Anchor, bucket, layers, shown.Order().ToList(), present.Count - shown.Count);

        // The last bucket may be cut short by the window's end.
        long BucketWidth(int i) => Math.Min(bucket, length - i * bucket);
    }
}
