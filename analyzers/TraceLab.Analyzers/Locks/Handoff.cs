namespace TraceLab.Analyzers.Locks;

/// <summary>
/// The lock passed from <see cref="Giver"/> to <see cref="Receiver"/> through the wait queue: the receiver was
/// waiting on <see cref="Object"/> (since <see cref="QueuedAt"/>), the giver's operation on the same object woke it
/// (<see cref="WokenAt"/>), it ran (<see cref="RunningAt"/>) and its wait returned holding the lock
/// (<see cref="AcquiredAt"/>).
/// </summary>
public readonly record struct Handoff(
    LockObject Object, int Giver, int Receiver, long QueuedAt, long WokenAt, long RunningAt, long AcquiredAt)
{
    /// <summary>Lock granted (waiter woken) → new owner running.</summary>
    public long GapNs => RunningAt - WokenAt;
    /// <summary>Waiting in the queue: wait started → woken.</summary>
    public long QueueWaitNs => WokenAt - QueuedAt;
}
