namespace TraceLab.Analyzers.WaitGraph;

/// <summary>Whether a thread is blocked right now (and since when, and why) plus its recent completed waits.</summary>
internal sealed class ThreadWaitState
{
    public ThreadWaitState(int historyCapacity) => History = new WaitHistory(historyCapacity);

    public bool Waiting;
    public long Since;
    /// <summary>Backend wait reason of the open wait (ETW KWAIT_REASON), -1 when the backend has none.</summary>
    public int Reason;
    /// <summary>A field, not a property: the struct is updated in place.</summary>
    public WaitHistory History;
}
