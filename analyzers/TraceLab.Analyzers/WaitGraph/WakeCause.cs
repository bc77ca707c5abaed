using TraceLab.Analyzers.Waits;
using TraceLab.Core;

namespace TraceLab.Analyzers.WaitGraph;

/// <summary>Which vertex a logged wakeup names as the end of a wait.</summary>
internal static class WakeCause
{
    // ETW KWAIT_REASON values of a timed sleep (Sleep, KeDelayExecutionThread): only a timer expiry ends them, and the
    // readying DPC is logged on whatever thread it interrupted, so the logged waker would be wrong.
    private const int DelayExecution = 4;
    private const int WrDelayExecution = 11;

    public static int Of(in KernelEvent waking, int waitReason) =>
        Of(waking, waitReason, WaitCall.None, uninterruptible: false);

    /// <summary>
    /// The vertex that ended a wait begun in syscall family <paramref name="call"/>: the waking thread, or for a
    /// wakeup from interrupt context (or the idle task) what the wait's syscall and state say the interrupt was
    /// (docs/metrics.md#wait-for-graph): a timer, the disk, the network, or kernel/irq when they do not tell.
    /// </summary>
    public static int Of(in KernelEvent waking, int waitReason, WaitCall call, bool uninterruptible)
    {
        if (waitReason is DelayExecution or WrDelayExecution) return WaitVertex.Timer;
        // In interrupt context common_pid is whoever was interrupted, not the waker.
        if (EventFlags.InInterrupt(waking.Flags) || waking.CurrentTid <= 0)
            return OfInterrupt(call, uninterruptible, (waking.Flags & EventFlags.SoftIrq) != 0);
        return waking.CurrentTid;
    }

    private static int OfInterrupt(WaitCall call, bool uninterruptible, bool softIrq) => call switch
    {
        // Only a thread releases a lock or sets a futex; an interrupt ending such a wait is its timeout's timer.
        WaitCall.FutexWait or WaitCall.FutexLockPi or WaitCall.Semop or WaitCall.FileLock or WaitCall.Sleep
            => WaitVertex.Timer,
        _ when uninterruptible && call is WaitCall.Io or WaitCall.Commit or WaitCall.Memory => WaitVertex.Disk,
        // Socket data arrives in the network receive softirq; timeouts of poll-style waits are hrtimer hardirqs.
        WaitCall.Io or WaitCall.Multiplex when softIrq => WaitVertex.Network,
        WaitCall.Multiplex or WaitCall.Event when !softIrq => WaitVertex.Timer,
        _ => WaitVertex.KernelIrq,
    };
}
