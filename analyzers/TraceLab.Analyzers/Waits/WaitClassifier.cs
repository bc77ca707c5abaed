namespace TraceLab.Analyzers.Waits;

/// <summary>
/// The rules that give a blocked interval its <see cref="WaitClass"/> (docs/metrics.md#wait-classes), in order.
/// Stateless: <see cref="WaitClassAnalyzer"/> gathers the facts and, for futex waits, which threads wait on the
/// object; other analyses may call it with their own facts.
/// </summary>
public static class WaitClassifier
{
    private const long ETimedOut = -110;
    private const long EAgain = -11;
    private const long EIntr = -4;

    /// <summary>
    /// The class of an interval. For a futex wait ended by a thread (not a timeout, not a signal) the answer depends
    /// on who else waits on the object: the result is <see cref="WaitClass.Lock"/> with
    /// <paramref name="needsObject"/> set, and the caller settles it with <see cref="SettleFutex"/> once the trace has
    /// shown who waits on it.
    /// </summary>
    public static WaitClass Classify(in WaitFacts f, out bool needsObject)
    {
        needsObject = false;
        switch (f.Call)
        {
            case WaitCall.FutexLockPi:
            case WaitCall.FileLock:
                return WaitClass.Lock;
            case WaitCall.FutexWait:
                // A timed wait that expired: nothing was released to it, but it may have been queueing for a lock
                // with a timeout and queued again (CPython's GIL): the object's other waits decide.
                if (IsTimedOut(f))
                {
                    needsObject = true;
                    return WaitClass.Condition;
                }
                if (f.Source is WakeSource.HardIrq or WakeSource.SoftIrq or WakeSource.Signal)
                    return WaitClass.Condition;
                if (f.HasResult && f.Result == EIntr) return WaitClass.Condition;
                if (f.Source == WakeSource.None) return WaitClass.Unknown;
                needsObject = true;
                return WaitClass.Lock;
            case WaitCall.Semop:
                return f.HasResult && f.Result is ETimedOut or EAgain or EIntr ? WaitClass.Condition : WaitClass.Lock;
            case WaitCall.Multiplex:
                // A latch: an event loop woken by a signal another thread sends when it releases what this one waits
                // for (PostgreSQL's lock manager sleeps this way); without stacks it cannot be told from a plain
                // notification.
                return f.Source == WakeSource.Signal ? WaitClass.Lock : WaitClass.Io;
            case WaitCall.Io:
                return WaitClass.Io;
            case WaitCall.Commit:
                return WaitClass.Commit;
            case WaitCall.Sleep:
                return WaitClass.Sleep;
            case WaitCall.Event:
                return WaitClass.Condition;
            case WaitCall.Memory:
                return WaitClass.Memory;
            case WaitCall.None:
                return f.WaitReason >= 0 ? OfWaitReason(f.WaitReason) : WaitClass.Unknown;
            default:
                return WaitClass.Unknown;
        }
    }

    /// <summary>True for a futex wait that returned -ETIMEDOUT: its class is settled by <see cref="SettleTimedOut"/>.
    /// </summary>
    public static bool IsTimedOut(in WaitFacts f) =>
        f.Call == WaitCall.FutexWait && f.HasResult && f.Result == ETimedOut;

    /// <summary>
    /// Settles a futex wait ended by a thread: a lock when the waker itself waits on the same object (the threads
    /// take turns holding it), or when the object is a shared futex and the waker blocks on shared futexes too (a
    /// per-waiter semaphore released by the previous holder, as PostgreSQL's LWLocks are), or when the object is the
    /// waiter's own private parking place and the waiter in turn released the waker from the waker's own
    /// (<paramref name="releasedInTurn"/>: threads that release each other one after another, as InnoDB's row-lock
    /// waits on per-transaction condition variables are); otherwise a condition (a producer waking a consumer, a
    /// pool's dispatcher waking an idle worker, a join).
    /// </summary>
    public static WaitClass SettleFutex(bool wakerWaitsOnObject, bool sharedObject, bool wakerWaitsOnShared,
        bool contendedMutexWord = false, bool releasedInTurn = false) =>
        wakerWaitsOnObject || contendedMutexWord || (sharedObject && wakerWaitsOnShared) || releasedInTurn
            ? WaitClass.Lock
            : WaitClass.Condition;

    /// <summary>
    /// How many times each of two threads must have released the other from a parking place of its own, over a
    /// trace of <paramref name="seconds"/>, for their waits there to be turns at a lock: at least 3, and at least
    /// <see cref="MutualReleasesPerSecond"/> a second. Peers queueing for a hot row release each other tens of times a
    /// second (about 70 per pair of 8 InnoDB connections); idle pool workers that hand a task on now and then do not.
    /// </summary>
    public static long MutualReleases(double seconds) =>
        Math.Max(3, (long)Math.Ceiling(MutualReleasesPerSecond * seconds));

    /// <summary>The rate in <see cref="MutualReleases"/>.</summary>
    public const double MutualReleasesPerSecond = 5;

    /// <summary>
    /// Settles a futex wait that timed out: a lock when the object is one the threads take turns holding (some wait
    /// on it was released by a thread that waits on it too, or it is a contended mutex word): the thread was queueing
    /// for it, gave up after its timeout and, in a lock's retry loop, queues again (CPython's GIL requests the drop
    /// after each 5 ms timeout); otherwise a condition (a timed wait for an event that did not come).
    /// </summary>
    public static WaitClass SettleTimedOut(bool objectTakenInTurns) =>
        objectTakenInTurns ? WaitClass.Lock : WaitClass.Condition;

    /// <summary>
    /// The value a FUTEX_WAIT expects at a contended glibc mutex word (lowlevellock: 0 free, 1 locked, 2 locked with
    /// waiters): a wait that expects 2 is a thread queueing for a mutex, whoever releases it. Condition variables,
    /// semaphores, barriers and joins wait for other values (a sequence or 0).
    /// </summary>
    public const long ContendedMutexValue = 2;

    /// <summary>
    /// ETW KWAIT_REASON values mapped to classes; reasons outside the lists are <see cref="WaitClass.Unknown"/>.
    /// </summary>
    public static WaitClass OfWaitReason(int reason) => reason switch
    {
        4 or 11 => WaitClass.Sleep, // DelayExecution, WrDelayExecution
        // FreePage, PageIn, PoolAllocation, their Wr forms, WrVirtualMemory, WrPageOut
        1 or 2 or 3 or 8 or 9 or 10 or 18 or 19 => WaitClass.Memory,
        15 => WaitClass.Condition, // WrQueue: a worker waiting for work
        // WrKeyedEvent, WrResource, WrPushLock, WrMutex, WrFastMutex, WrGuardedMutex, WrAlertByThreadId (SRW locks)
        21 or 27 or 28 or 29 or 34 or 35 or 37 => WaitClass.Lock,
        _ => WaitClass.Unknown,
    };
}
