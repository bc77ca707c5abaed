namespace TraceLab.Analyzers.Locks;

/// <summary>
/// How far a thread's lock operation got. It only moves forward within one operation and starts again at the
/// thread's next syscall entry; after the exit (<see cref="ThreadLockOperation.Kind"/> back to
/// <see cref="LockOpKind.None"/>) it keeps how far the operation that ended got.
/// </summary>
public enum LockPhase : byte
{
    /// <summary>No lock operation since the thread's last syscall entry (that syscall named no lock object).</summary>
    None,
    /// <summary>Entered; not switched out voluntarily since.</summary>
    Entered,
    /// <summary>Switched out voluntarily inside the operation (it waits); not woken since.</summary>
    Blocked,
    /// <summary>Woken, by anyone, after it blocked; not seen running since.</summary>
    Woken,
    /// <summary>
    /// Seen running after that wakeup (switched in). Blocking again in the same operation leaves it here: the
    /// operation was woken once.
    /// </summary>
    Running,
}

/// <summary>
/// One thread's current lock operation as <see cref="LockOperationTracker"/> follows it: what it operates on, how far
/// it got (<see cref="Phase"/>), and the release that ended its wait, if one did. Read-only outside the tracker.
/// </summary>
public sealed class ThreadLockOperation
{
    /// <summary>The value of <see cref="RunningAt"/> and <see cref="BlockedSince"/> when there is none.</summary>
    public const long Never = long.MinValue;

    internal ThreadLockOperation(int tid, int slot)
    {
        Tid = tid;
        Slot = slot;
    }

    /// <summary>The thread, as the pass numbers it (<see cref="TraceLab.Core.ThreadIds"/>).</summary>
    public int Tid { get; }

    /// <summary>Its <see cref="ThreadSlots"/> slot in the pass.</summary>
    public int Slot { get; }

    /// <summary>The operation in progress; <see cref="LockOpKind.None"/> outside one (after its exit).</summary>
    public LockOpKind Kind { get; internal set; }

    /// <summary>
    /// The object of the current or last operation (scoped to its process, <see cref="LockScope"/>), or the inferred
    /// object of an inferred wait (<see cref="LockOperationTracker"/>).
    /// </summary>
    public LockObject Object { get; internal set; }

    /// <summary>When the thread entered its current or last syscall (of any kind).</summary>
    public long EnteredAt { get; internal set; }

    public LockPhase Phase { get; internal set; }

    /// <summary>
    /// The thread whose operation on the same object woke this one (a release, or an inferred one); 0 when none
    /// since the operation began. Cleared at the exit.
    /// </summary>
    public int Releaser { get; internal set; }

    /// <summary>The slot of <see cref="Releaser"/>.</summary>
    public int ReleaserSlot { get; internal set; }

    /// <summary>When the release woke it.</summary>
    public long ReleasedAt { get; internal set; }

    /// <summary>
    /// When it began to wait for what the release gave it: its entry, or an inferred wait's switch-out.
    /// </summary>
    public long QueuedAt { get; internal set; }

    /// <summary>
    /// When it ran after the release (the release found it still on its CPU, a switch-in, or the repaired start of
    /// a switch-in that was not logged); <see cref="Never"/> until then.
    /// </summary>
    public long RunningAt { get; internal set; }

    /// <summary>
    /// Since when the thread is voluntarily off its CPU (its last switch-out did not preempt it), whatever it waits
    /// for; <see cref="Never"/> while it runs or is preempted. Inferred waits start here.
    /// </summary>
    public long BlockedSince { get; internal set; } = Never;

    /// <summary>The wait reason of that switch-out (ETW's KWAIT_REASON; -1 on Linux).</summary>
    public int BlockReason { get; internal set; } = -1;

    /// <summary>The thread is in a lock operation.</summary>
    public bool InOperation => Kind != LockOpKind.None;

    /// <summary>It blocked in this operation (or, after its exit, in the one that ended).</summary>
    public bool HasBlocked => Phase >= LockPhase.Blocked;

    /// <summary>
    /// It was woken after it blocked in this operation (or, after its exit, in the one that ended), whoever woke it.
    /// </summary>
    public bool WasWoken => Phase >= LockPhase.Woken;

    /// <summary>A release woke it in this operation.</summary>
    public bool IsReleased => Releaser > 0;

    /// <summary>It ran after that release.</summary>
    public bool RanSinceRelease => RunningAt != Never;
}
