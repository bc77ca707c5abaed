namespace TraceLab.Analyzers.Timeline;

/// <summary>
/// Per thread, time in each state inside the window and the number of segments (docs/metrics.md#timeline).
/// </summary>
public readonly record struct TimelineThreadTotals(
    int Tid, long RunningNs, long RunnableNs, long BlockedNs, int Segments, int WakesReceived);

/// <summary>Sums a <see cref="TimelineData"/>'s segments per thread and state.</summary>
public static class TimelineSummary
{
    public static TimelineThreadTotals For(TimelineData data, int tid)
    {
        long run = 0, ready = 0, blocked = 0;
        var n = 0;
        foreach (var s in data.Segments)
        {
            if (s.Tid != tid) continue;
            n++;
            var d = s.End - s.Start;
            switch (s.State)
            {
                case ThreadRunState.Running: run += d; break;
                case ThreadRunState.Runnable: ready += d; break;
                default: blocked += d; break;
            }
        }
        var wakes = data.Wakes.Count(w => w.Wakee == tid);
        return new TimelineThreadTotals(tid, run, ready, blocked, n, wakes);
    }
}
