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
                // A timed wait that expired, or one an interrupt ended: nothing was released to it.
                if (f.HasResult && f.Result == ETimedOut) return WaitClass.Condition;
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

    /// <summary>
    /// Settles a futex wait ended by a thread: a lock when the waker itself waits on the same object (the threads
    /// take turns holding it), or when the object is a shared futex and the waker blocks on shared futexes too (a
    /// per-waiter semaphore released by the previous holder, as PostgreSQL's LWLocks are); otherwise a condition
    /// (a producer waking a consumer, a pool's dispatcher waking an idle worker, a join).
    /// </summary>
    public static WaitClass SettleFutex(bool wakerWaitsOnObject, bool sharedObject, bool wakerWaitsOnShared,
        bool contendedMutexWord = false) =>
        wakerWaitsOnObject || contendedMutexWord || (sharedObject && wakerWaitsOnShared)
            ? WaitClass.Lock
            : WaitClass.Condition;

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
