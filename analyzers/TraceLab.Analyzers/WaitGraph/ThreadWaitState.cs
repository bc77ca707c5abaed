namespace TraceLab.Analyzers.WaitGraph;

/// <summary>Whether a thread is blocked right now (and since when, and why) plus its recent completed waits.</summary>
internal sealed class ThreadWaitState
{
    public ThreadWaitState(int historyCapacity) => History = new WaitHistory(historyCapacity);

    public bool Waiting;
    public long Since;
    /// <summary>Backend wait reason of the open wait (ETW KWAIT_REASON), -1 when the backend has none.</summary>
    public int Reason;
    /// <summary>Family of the syscall the thread is in now (None between syscalls or when none was recorded).</summary>
    public Waits.WaitCall Call;
    /// <summary>Family of the syscall open when the current (or last) wait began.</summary>
    public Waits.WaitCall BlockCall;
    /// <summary>The current (or last) wait began in TASK_UNINTERRUPTIBLE (D).</summary>
    public bool Uninterruptible;
    /// <summary>
    /// A waking logged while it was not waiting, since its last switch-in; what it names as the culprit.
    /// </summary>
    public bool HasEarly;
    public int EarlyCulprit;
    /// <summary>
    /// Its open wait followed such a waking (ThreadAccounting.IsWokenBeforeSwitchOut decides): switched in with no
    /// other waking first, that waking ended the wait at once (docs/metrics.md#woken-before-switch-out).
    /// </summary>
    public bool WokenEarly;
    /// <summary>A field, not a property: the struct is updated in place.</summary>
    public WaitHistory History;
}
