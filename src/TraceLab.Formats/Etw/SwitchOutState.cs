using TraceLab.Core;

namespace TraceLab.Formats.Etw;

/// <summary>
/// Translates how Windows describes a thread leaving the CPU (KTHREAD_STATE plus wait mode) into the Linux prev_state
/// bits the event model and analyzers use, so voluntary/involuntary switches mean the same on both backends.
/// </summary>
public static class SwitchOutState
{
    /// <summary>
    /// CSwitch.OldThreadWaitMode: the wait can be ended by user-mode APCs (alertable from user mode).
    /// </summary>
    public const byte UserMode = 1;

    public static long ToTaskState(KThreadState state, byte waitMode) => state switch
    {
        // Still runnable when switched out: the scheduler took the CPU away (preemption, quantum end).
        KThreadState.Ready or KThreadState.DeferredReady or KThreadState.Standby => TaskState.Running,
        // A user-mode wait is what Linux calls an interruptible sleep: the thread asked to block.
        KThreadState.Waiting => waitMode == UserMode ? TaskState.Interruptible : TaskState.Uninterruptible,
        KThreadState.Terminated => TaskState.ExitDead,
        // Transition (stack paged out) and the rest are not runnable and not a plain wait: count them as blocked
        // in the kernel rather than guess a preemption.
        _ => TaskState.Uninterruptible,
    };
}
