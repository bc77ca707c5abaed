using TraceLab.Core;

namespace TraceLab.Analyzers.WaitGraph;

/// <summary>Which vertex a logged wakeup names as the end of a wait.</summary>
internal static class WakeCause
{
    // ETW KWAIT_REASON values of a timed sleep (Sleep, KeDelayExecutionThread): only a timer expiry ends them, and the
    // readying DPC is logged on whatever thread it interrupted, so the logged waker would be wrong.
    private const int DelayExecution = 4;
    private const int WrDelayExecution = 11;

    public static int Of(in KernelEvent waking, int waitReason)
    {
        if (waitReason is DelayExecution or WrDelayExecution) return WaitVertex.Timer;
        // In interrupt context common_pid is whoever was interrupted, not the waker.
        if (EventFlags.InInterrupt(waking.Flags) || waking.Pid <= 0) return WaitVertex.KernelIrq;
        return waking.Pid;
    }
}
