namespace TraceLab.Analyzers.Timeline;

/// <summary>
/// Per thread, time in each state inside the window and the number of segments (docs/metrics.md#timeline).
/// </summary>
public readonly record struct TimelineThreadTotals(
    int Tid, long RunningNs, long RunnableNs, long BlockedNs, int Segments, int WakesReceived);

/// <summary>Sums a <see cref="TimelineData"/>'s segments per thread and state.</summary>
public static class TimelineSummary
{
    public static TimelineThreadTotals For(TimelineData data, int tid) => For(data, [tid])[tid];

    /// <summary>
    /// The totals of each of <paramref name="tids"/>, from one look through the segments and wakeups: a system
    /// report's window holds every thread's segments (a busy machine's: hundreds of thousands), and a look per thread
    /// drawn made the timeline's table a tenth of report.html's time.
    /// </summary>
    public static IReadOnlyDictionary<int, TimelineThreadTotals> For(TimelineData data, IEnumerable<int> tids)
    {
        var sums = new Dictionary<int, Sums>();
        foreach (var tid in tids) sums.TryAdd(tid, new Sums());
        foreach (var s in data.Segments)
        {
            if (!sums.TryGetValue(s.Tid, out var sum)) continue;
            sum.Segments++;
            var d = s.End - s.Start;
            switch (s.State)
            {
                case ThreadRunState.Running: sum.Running += d; break;
                case ThreadRunState.Runnable: sum.Runnable += d; break;
                default: sum.Blocked += d; break;
            }
        }
        foreach (var w in data.Wakes)
            if (sums.TryGetValue(w.Wakee, out var sum)) sum.Wakes++;
        return sums.ToDictionary(kv => kv.Key, kv => new TimelineThreadTotals(kv.Key, kv.Value.Running,
            kv.Value.Runnable, kv.Value.Blocked, kv.Value.Segments, kv.Value.Wakes));
    }

    private sealed class Sums
    {
        public long Running, Runnable, Blocked;
        public int Segments, Wakes;
    }
}
