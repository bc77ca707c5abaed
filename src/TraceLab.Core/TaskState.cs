namespace TraceLab.Core;

/// <summary>Linux task state bits as logged in sched_switch prev_state (include/linux/sched.h).</summary>
public static class TaskState
{
    public const long Running = 0;
    public const long Interruptible = 0x1;
    public const long Uninterruptible = 0x2;
    public const long Stopped = 0x4;
    public const long Traced = 0x8;
    public const long ExitDead = 0x10;
    public const long ExitZombie = 0x20;
    public const long Parked = 0x40;
    public const long Idle = 0x80;

    /// <summary>
    /// Kernels set a bit just above the state mask when the switch was a preemption even though a sleep state was
    /// being set (TASK_REPORT_MAX; shown as "+" by trace-cmd). It is 0x100 on the kernels this project runs on.
    /// </summary>
    public const long PreemptedFlag = 0x100;

    /// <summary>A switch-out is involuntary (preemption) when the task was still runnable.</summary>
    public static bool IsPreempted(long prevState) => (prevState & 0xFF) == Running || (prevState & PreemptedFlag) != 0;

    public static string Format(long state)
    {
        if ((state & 0xFF) == 0) return (state & PreemptedFlag) != 0 ? "R+" : "R";
        Span<char> buf = stackalloc char[10];
        var n = 0;
        ReadOnlySpan<char> letters = "SDTtXZPI";
        for (var bit = 0; bit < 8; bit++)
            if ((state & (1L << bit)) != 0) buf[n++] = letters[bit];
        if ((state & PreemptedFlag) != 0) buf[n++] = '+';
        return new string(buf[..n]);
    }
}
