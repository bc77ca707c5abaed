namespace TraceLab.Analyzers;

/// <summary>
/// The <see cref="ThreadSlots"/> slots of the threads one event names, as <see cref="ThreadAccounting"/> resolved them
/// while handling it, so no analyzer of the pass repeats the lookup. -1 where the tid is not a thread (≤ 0) or the
/// event's kind does not name that role.
/// </summary>
public readonly struct EventSlots(int pid, int prev, int next, int woken)
{
    /// <summary>The logging thread's (<c>KernelEvent.CurrentTid</c>); -1 for a switch.</summary>
    public int Pid { get; } = pid;

    /// <summary>Switch: the thread switched out.</summary>
    public int Prev { get; } = prev;

    /// <summary>Switch: the thread switched in.</summary>
    public int Next { get; } = next;

    /// <summary>Waking / WakeupNew: the woken thread.</summary>
    public int Woken { get; } = woken;

    public static EventSlots OfPid(int pid) => new(pid, -1, -1, -1);

    public static EventSlots OfSwitch(int prev, int next) => new(-1, prev, next, -1);

    public static EventSlots OfWaking(int pid, int woken) => new(pid, -1, -1, woken);
}
