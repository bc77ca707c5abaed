using TraceLab.Analyzers.Locks;

namespace TraceLab.Analyzers.Findings;

/// <summary>
/// What <see cref="FindingEvidenceAnalyzer"/> follows of one thread besides its lock operation, which is the pass's
/// <see cref="LockOperationTracker"/>'s (<see cref="Lock"/>).
/// </summary>
internal sealed class FindingThread
{
    /// <summary>No such time (yet).</summary>
    public const long None = long.MinValue;

    public FindingThread(int tid, ThreadLockOperation lockOperation)
    {
        Tid = tid;
        Lock = lockOperation;
        Stats = new ThreadEvidence { Tid = tid };
        Preemption.At = Deschedule.SleepStart = Deschedule.Start = Deschedule.End = None;
        Deschedule.LastLockOpEnter = Wakeup.At = None;
    }

    public readonly int Tid;
    /// <summary>Its current lock operation, as the tracker follows it.</summary>
    public readonly ThreadLockOperation Lock;
    public readonly ThreadEvidence Stats;
    /// <summary>Created at the first preemption: most threads of a trace are never preempted.</summary>
    public WindowSeries? Ready;

    /// <summary>
    /// The syscall it is in (any, not only lock operations: a yield is a deschedule); -1 outside one.
    /// </summary>
    public int SyscallNr = -1;
    public long SyscallEnter;
    /// <summary>Its current wait counted as behind a descheduled holder up to here (two holders of a semaphore
    /// off the CPU at once do not count the same time twice).</summary>
    public long BehindCountedUntil;
    /// <summary>The state of its operation's object when last looked up (checked against it before use): a blocked
    /// lock operation needs it at its switch-out and its exit, one hashed lookup instead of two.</summary>
    public FindingObject? ObjState;

    /// <summary>Created (sched_wakeup_new) and not yet run.</summary>
    public long CreatedAt = None;
    public long LastSwitchIn = None;

    public Preemption Preemption;
    public Deschedule Deschedule;
    public Wakeup Wakeup;
    public WakeCycle Cycle;
    public LastWake LastWake;
}

/// <summary>The thread's open preemption: runnable since <see cref="At"/>, by whom.</summary>
internal struct Preemption
{
    public long At;
    public bool ByHigherPriority;
    /// <summary>The task that took the CPU.</summary>
    public int Preemptor;
    /// <summary>The preemptor is a thread this one had just woken.</summary>
    public bool ByWakee;
    /// <summary>That wakeup was issued inside a lock operation (on <see cref="WakeObject"/>).</summary>
    public bool WakeInOp;
    public LockObject WakeObject;
}

/// <summary>
/// The thread's last yield or sleep: a holder descheduled over [<see cref="Start"/>, <see cref="End"/>].
/// </summary>
internal struct Deschedule
{
    /// <summary>Voluntary switch-out outside a lock operation (a sleep, I/O): when, until it runs again.</summary>
    public long SleepStart;
    public long Start, End;
    /// <summary>The deschedule was a preemption by a thread it had just woken.</summary>
    public bool ByWakee;
    /// <summary>That wakeup happened inside a lock operation on <see cref="WakeObject"/> (a release handing it
    /// over).</summary>
    public bool WakeInOp;
    public LockObject WakeObject;
    public long LastLockOpEnter;
    /// <summary>The current lock operation is the first since the deschedule (so the lock was held across
    /// it).</summary>
    public bool FirstOpAfter;
}

/// <summary>The thread's last wakeup from a block: by whom, when, and the object waited on then (if any).</summary>
internal struct Wakeup
{
    public int By;
    public long At;
    public bool FromObject;
    public LockObject From;
    public bool AwaitingFirstOp;
}

/// <summary>
/// A wake-while-holding candidate: after the wakeup, the first lock operation blocked on another object; a cycle
/// once the waker releases that object while this thread is blocked on it, closed at the wait's exit.
/// </summary>
internal struct WakeCycle
{
    public bool Candidate;
    public LockObject Object;
    public int Waker;
    public long WokenAt;
    public bool InCycle;
}

/// <summary>The thread's last wakeup of another thread from a block, and where it was issued.</summary>
internal struct LastWake
{
    /// <summary>The thread it woke, until its own next lock operation.</summary>
    public FindingThread? Wakee;
    public bool InOp;
    public LockObject Object;
}

/// <summary>One lock object's evidence and the threads blocked on it right now.</summary>
internal sealed class FindingObject(LockObject obj, WindowSeries blocked)
{
    public readonly ObjectEvidence Stats = new() { Object = obj };
    public readonly WindowSeries Blocked = blocked;
    /// <summary>Threads blocked in a lock operation on the object right now (bounded by threads).</summary>
    public readonly List<FindingThread> Waiters = [];
}
