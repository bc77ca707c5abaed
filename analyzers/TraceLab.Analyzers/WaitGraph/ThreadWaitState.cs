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
    /// <summary>A field, not a property: the struct is updated in place.</summary>
    public WaitHistory History;
}
