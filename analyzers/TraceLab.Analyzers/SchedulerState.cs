using TraceLab.Core;

namespace TraceLab.Analyzers;

// What ThreadAccounting keeps per thread and per CPU: plain state, read and written only by the accounting.

/// <summary>
/// A thread's scheduler state. <c>WokenBeforeSwitchOut</c>: switched out to sleep after a waking for it was logged
/// while it still ran. On Linux that waking is usually the one that ends this sleep (try_to_wake_up found it already
/// dequeued but still on
/// its CPU, and the waker's CPU logged <c>sched_waking</c> before this CPU logged the switch), so the thread
/// counts as runnable; unless another waking comes before its switch-in: then the first one found it still
/// running and this is a new wait, blocked until that waking.
/// </summary>
internal enum RunState : byte { Unknown, Running, Runnable, Blocked, Dead, WokenBeforeSwitchOut }

/// <summary>One thread's state in the accounting: since when, on which CPU, and how it became runnable.</summary>
internal sealed class AccountedThread
{
    public RunState State;
    public long Since;
    public int Cpu = ThreadAccounting.UnknownTask;
    /// <summary>Runnable because it was woken (true) or preempted (false).</summary>
    public bool Woken;
    /// <summary>
    /// Woken while still on CPU: ETW may log ReadyThread before the readied thread's own switch-out, so a blocking
    /// switch-out that follows makes it runnable, not blocked.
    /// </summary>
    public bool WokenWhileRunning;
    /// <summary>
    /// The thread's stats once created (see <c>ThreadAccounting.StatsOf</c>): one table lookup less per switch and
    /// wakeup.
    /// </summary>
    public ThreadStats? Stats;
}

/// <summary>One CPU's state in the accounting: which thread the switch chain says runs there, last seen when.</summary>
internal struct AccountedCpu
{
    public int Current;
    /// <summary>The slot of <see cref="Current"/> when that is a thread (&gt; 0), else -1.</summary>
    public int CurrentSlot;
    /// <summary>
    /// Last time <see cref="Current"/> was known to be on this CPU (its switch-in or one of its events).
    /// </summary>
    public long LastEvidence;
    /// <summary>
    /// <see cref="Current"/> is a thread whose tid has stood for it in every event since it was set: no tid has
    /// been retired or reused since (<c>ThreadAccounting.ForgetCurrentTids</c>), so an event logged under that tid
    /// names it as it is, without going through <see cref="ThreadInstanceMap"/>
    /// (<c>ThreadAccounting.TryEvidenceOfCurrent</c>).
    /// </summary>
    public bool TidStands;
}
