namespace TraceLab.Capture.Windows;

/// <summary>
/// Stops a run's ETW sessions if TraceLab dies before it stops them itself (<see cref="EtwSessionGuard"/>; tests use
/// a fake). Disposing it means TraceLab is done: whatever is still watched is stopped then too.
/// </summary>
public interface IEtwGuard : IDisposable
{
    /// <summary>
    /// From now on <paramref name="sessionName"/> is stopped if TraceLab dies. Call before starting it.
    /// </summary>
    void Watch(string sessionName);

    /// <summary>
    /// The run stopped <paramref name="sessionName"/> itself: nothing left for the guard to do about it.
    /// </summary>
    void Forget(string sessionName);
}

/// <summary>
/// Takes the processes a run starts down with TraceLab: on Windows a job object that kills its processes when its
/// last handle closes (<see cref="KillOnCloseJob"/>), which TraceLab alone holds. Only built-in workloads are put in
/// it; a user's program (`trace --`, `--pid`) never is.
/// </summary>
public interface IProcessJob : IDisposable
{
    /// <summary>
    /// Adds a running process; it is killed when TraceLab's handle to the job closes (TraceLab's exit).
    /// </summary>
    void Add(int pid);
}

/// <summary>
/// What keeps a run from leaving anything behind if TraceLab dies: the guard that stops its sessions (started per
/// run, for the owner pid) and the job its built-in workload dies with (made when a workload is first added).
/// Either may be null (tests of other logic): then that protection is not there.
/// </summary>
public sealed record EtwSessionProtection(Func<int, IEtwGuard>? StartGuard, Func<IProcessJob>? CreateJob)
{
    /// <summary>
    /// Makes the writer of TraceLab's own markers (its pid, the target's window) as events of the workload marker
    /// provider; null: TraceLab writes no markers into the trace.
    /// </summary>
    public Func<IEtwMarkerWriter>? CreateMarkerWriter { get; init; }
}

/// <summary>
/// Writes marker events of the workload marker provider (<see cref="EtwCaptureSession.WorkloadProvider"/>), as the
/// workloads' platform_win32.c does: a string event the ETL reader turns into a Marker (<see cref="EtwEventWriter"/>;
/// tests use a fake).
/// </summary>
public interface IEtwMarkerWriter : IDisposable
{
    /// <summary>Writes one marker; false when ETW refused it.</summary>
    bool Write(string text);
}
