namespace TraceLab.Analyzers;

/// <summary>
/// The observers of ThreadAccounting's run intervals and CPU occupancy (<see cref="ISchedulingObserver"/>), told of
/// each transition in the order they subscribed; with exactly one (the usual case) it is called without a loop.
/// </summary>
internal sealed class SchedulingObservers
{
    private ISchedulingObserver[] _observers = [];
    private ISchedulingObserver? _only;

    public void Add(ISchedulingObserver observer)
    {
        ArgumentNullException.ThrowIfNull(observer);
        _observers = [.. _observers, observer];
        _only = _observers.Length == 1 ? observer : null;
    }

    public void RunEnded(int tid, int slot, int cpu, long since, long end, long t)
    {
        if (_only is { } only) only.OnRunEnded(tid, slot, cpu, since, end, t);
        else foreach (var o in _observers) o.OnRunEnded(tid, slot, cpu, since, end, t);
    }

    public void RunStarted(int tid, int slot, int cpu, long since, long t, long runnableSince)
    {
        if (_only is { } only) only.OnRunStarted(tid, slot, cpu, since, t, runnableSince);
        else foreach (var o in _observers) o.OnRunStarted(tid, slot, cpu, since, t, runnableSince);
    }

    public void BecameRunnable(int tid, int slot, long t)
    {
        if (_only is { } only) only.OnRunnable(tid, slot, t);
        else foreach (var o in _observers) o.OnRunnable(tid, slot, t);
    }

    public void CpuTaskChanged(int cpu, int tid, long since, long t)
    {
        if (_only is { } only) only.OnCpuTaskChanged(cpu, tid, since, t);
        else foreach (var o in _observers) o.OnCpuTaskChanged(cpu, tid, since, t);
    }
}
