using System.Runtime.CompilerServices;
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

/// <summary>
/// One thread's state in the accounting: since when, on which CPU. Its own transitions are here; what they mean for
/// CPUs and observers is the accounting's.
/// </summary>
internal sealed class AccountedThread
{
    public RunState State;
    public long Since;
    public int Cpu = ThreadAccounting.UnknownTask;
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

    /// <summary>Adds its time in its current state, from <see cref="Since"/> to <paramref name="end"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Charge(ThreadStats st, MeasuredRegion region, long end)
    {
        var ns = region.Overlap(Since, end);
        switch (State)
        {
            case RunState.Running: st.RunNs += ns; break;
            case RunState.Runnable or RunState.WokenBeforeSwitchOut: st.ReadyNs += ns; break;
            case RunState.Blocked: st.WaitNs += ns; break;
        }
    }

    /// <summary>Starts running on <paramref name="cpu"/> at <paramref name="since"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Run(int cpu, long since)
    {
        State = RunState.Running;
        Since = since;
        Cpu = cpu;
    }

    /// <summary>
    /// Leaves its CPU at <paramref name="t"/>: dead, preempted (runnable) or blocking. True when it is runnable now.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool LeaveCpu(bool preempted, bool dead, long t)
    {
        // A blocking switch-out can follow its own wakeup: ETW can log ReadyThread before the readied thread's
        // CSwitch, and Linux's waker CPU can log sched_waking before the sleeper's CPU logs sched_switch. On Linux the
        // waking may also have found the thread still running (then it stays running and this is a new wait): that is
        // settled by whichever comes next, another waking or the switch-in.
        var alreadyWoken = WokenWhileRunning && !preempted && !dead;
        State = dead ? RunState.Dead
            : preempted ? RunState.Runnable
            : alreadyWoken ? RunState.WokenBeforeSwitchOut : RunState.Blocked;
        WokenWhileRunning = false;
        Since = t;
        Cpu = ThreadAccounting.UnknownTask;
        return State is RunState.Runnable or RunState.WokenBeforeSwitchOut;
    }

    /// <summary>
    /// A waking at <paramref name="t"/> of a thread that is not blocked (the accounting charges a blocked one's wait
    /// first). True when it made the thread runnable.
    /// </summary>
    public bool Wake(long t)
    {
        switch (State)
        {
            case RunState.Running:
                WokenWhileRunning = true;
                return false;
            case RunState.Runnable:
                return false; // Already runnable: the wakeup changes nothing.
            default:
                State = RunState.Runnable;
                Since = t;
                return true;
        }
    }
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
