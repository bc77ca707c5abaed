namespace TraceLab.Analyzers.Wakeups;

/// <summary>
/// Sees <see cref="WakeupAnalyzer"/>'s futile wakeups one by one (for viewers); statistics do not depend on it.
/// </summary>
public interface IWakeupObserver
{
    /// <summary>
    /// <paramref name="tid"/> was woken at <paramref name="wokenAt"/> and blocked again at <paramref name="blockedAt"/>
    /// without progress (docs/metrics.md#futile-wakeups); only wakeups inside the measured region, as the report counts
    /// them.
    /// </summary>
    void OnFutileWakeup(int tid, long wokenAt, long blockedAt);
}
