namespace TraceLab.Analyzers;

/// <summary>
/// Scheduling transitions as <see cref="ThreadAccounting"/> decides them, logged or repaired
/// (docs/metrics.md#chain-break-repair). Analyzers that need run intervals or CPU occupancy subscribe instead of
/// keeping their own copy of the state
/// machine, so every analysis agrees on when a thread ran and where. Calls arrive while the accounting handles an
/// event, before any <see cref="TraceLab.Core.IKernelEventSink.OnEvent"/> sees that event; <c>t</c> is always that
/// event's time. Times are unclipped; clip with <see cref="MeasuredRegion.Overlap"/>. <c>slot</c> is the thread's
/// <see cref="ThreadAccounting.Slots"/> slot, so an observer indexes its per-thread state without a lookup of its own.
/// </summary>
public interface ISchedulingObserver
{
    /// <summary>
    /// <paramref name="tid"/> ran on <paramref name="cpu"/> from <paramref name="since"/> to <paramref name="end"/>.
    /// </summary>
    void OnRunEnded(int tid, int slot, int cpu, long since, long end, long t);

    /// <summary>
    /// <paramref name="tid"/> runs on <paramref name="cpu"/> from <paramref name="since"/> (a logged switch-in, or the
    /// repaired start estimate ≤ <paramref name="t"/>). <paramref name="runnableSince"/> is when it became runnable if
    /// it was runnable until then, else <see cref="long.MinValue"/>.
    /// </summary>
    void OnRunStarted(int tid, int slot, int cpu, long since, long t, long runnableSince);

    /// <summary><paramref name="tid"/> became runnable at <paramref name="t"/> (woken, or preempted).</summary>
    void OnRunnable(int tid, int slot, long t);

    /// <summary>
    /// From <paramref name="since"/>, <paramref name="cpu"/> runs <paramref name="tid"/>: a thread, 0 for idle, or
    /// <see cref="ThreadAccounting.UnknownTask"/> when its task is unknown until its next event.
    /// </summary>
    void OnCpuTaskChanged(int cpu, int tid, long since, long t);
}
