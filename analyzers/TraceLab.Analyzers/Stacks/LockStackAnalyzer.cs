using TraceLab.Core;
using TraceLab.Core.Syscalls;

namespace TraceLab.Analyzers.Stacks;

/// <summary>A lock word of one process: the address its futex syscalls name.</summary>
/// <param name="Process">The process whose threads wait on it (from the stack's process).</param>
/// <param name="Address">The futex word's user address (uaddr).</param>
public readonly record struct LockAddress(int Process, ulong Address);

/// <summary>
/// An off-CPU interval's key with its waker (bcc offwaketime): the blocked thread's process and switch-out stack, the
/// thread whose sched_waking ended the interval (0: an interrupt or none seen) and that waking's stack (0: none).
/// </summary>
public readonly record struct OffWakeKey(int Process, int OffStack, int Waker, int WakerStack);

/// <summary>Count and time of one stack at one lock (or of one off-CPU stack).</summary>
public sealed class StackTotals
{
    /// <summary>Operations (waits, wakes, switch-outs) with this stack.</summary>
    public long Count { get; internal set; }

    /// <summary>Nanoseconds: waited (blocking), released (releasing), off CPU (off-CPU stacks).</summary>
    public long Nanoseconds { get; internal set; }
}

/// <summary>What one lock word's stacks add up to (docs/metrics.md#lock-stacks).</summary>
public sealed class LockStacks
{
    /// <summary>Stack id → the futex waits that entered the kernel with it.</summary>
    public Dictionary<int, StackTotals> Blocking { get; } = new();

    /// <summary>Stack id → the futex wakes with it that woke a waiter of this lock.</summary>
    public Dictionary<int, StackTotals> Releasing { get; } = new();

    /// <summary>Futex waits on the lock; their time from entry to return.</summary>
    public long Waits { get; internal set; }

    /// <summary>Nanoseconds in futex waits on the lock.</summary>
    public long WaitNanoseconds { get; internal set; }

    /// <summary>When the lock was first seen (looks its variable up in the maps of that time).</summary>
    public long FirstSeen { get; internal set; }
}

/// <summary>
/// Pairs each lock word with the call stacks that wait on it and release it, as WPA pairs New Thread Stack and Ready
/// Thread Stack: a futex wait's stack (at sys_enter_futex, else where it blocked: its switch-out) is a blocking
/// stack, charged the time to its return; a futex wake's stack (at its entry, else its sched_waking's) is a releasing
/// stack of every waiter of that word it wakes (sched_waking from the waker inside the wake, not from an interrupt),
/// charged the time those waiters had waited. Also the off-CPU time per stack of
/// each thread that blocks (its stack at the switch-out, prev_state not runnable), as bcc's offcputime sums it.
/// Memory grows with lock words, threads and distinct stacks, not with events.
/// </summary>
public sealed class LockStackAnalyzer : IKernelEventSink
{
    private const int FutexCmdMask = 0x7F;
    private readonly Dictionary<int, Pending> _threads = new();

    private sealed class Pending
    {
        public int Process;
        public ulong WaitAddress;
        public int WaitStack;
        public long WaitStart = -1;
        public int ReleasedBy;
        public ulong WakeAddress;
        public int WakeStack;
        public bool InWake;
        public int OffStack;
        public long OffStart = -1;
        /// <summary>The last waking of this thread since it last ran: who, its stack (0: interrupt, none).</summary>
        public int Waker;
        public int WakerStack;
    }

    /// <summary>The lock words seen, with their stacks.</summary>
    public Dictionary<LockAddress, LockStacks> Locks { get; } = new();

    /// <summary>(process, stack id) → time off CPU after a blocking switch-out with that stack.</summary>
    public Dictionary<(int Process, int Stack), StackTotals> OffCpu { get; } = new();

    /// <summary>(thread, stack id) → that thread's time off CPU by blocking stack.</summary>
    public Dictionary<(int Thread, int Stack), StackTotals> OffCpuByThread { get; } = new();

    /// <summary>
    /// Off-CPU time by blocking stack and by the waker and waker's stack that ended it (bcc offwaketime); the waker is
    /// the last waking of the thread since it last ran, so one logged just before its switch-out counts
    /// (docs/metrics.md#woken-before-switch-out).
    /// </summary>
    public Dictionary<OffWakeKey, StackTotals> OffWake { get; } = new();

    /// <summary>Events that carried a stack.</summary>
    public long EventsWithStacks { get; private set; }

    /// <summary>Wakeups in hard-interrupt context, left out: their stack is the interrupted task's.</summary>
    public long InterruptWakeups { get; private set; }

    private readonly Func<int, int> _processOf;

    private readonly bool _switchStackOfNext;

    /// <param name="processOf">A thread's process as the trace has told it so far (the pass's process lineage).</param>
    /// <param name="switchStackOfNext">
    /// A switch's stack is the incoming thread's, where it had blocked (ETW), not the outgoing one's
    /// (<see cref="TraceLab.Core.IStackTraceReader.SwitchStacksAreOfNextThread"/>).
    /// </param>
    public LockStackAnalyzer(Func<int, int> processOf, bool switchStackOfNext = false)
    {
        _processOf = processOf;
        _switchStackOfNext = switchStackOfNext;
    }

    /// <inheritdoc/>
    public void OnEvent(in KernelEvent e)
    {
        if (e.StackId != 0) EventsWithStacks++;
        switch (e.Kind)
        {
            case KernelEventKind.SyscallEnter when IsFutex(e): Enter(e); break;
            case KernelEventKind.SyscallExit when IsFutex(e): Exit(e); break;
            case KernelEventKind.Waking: Waking(e); break;
            case KernelEventKind.Switch: Switch(e); break;
        }
    }

    private static bool IsFutex(in KernelEvent e) => e.SyscallNumber == LinuxSyscalls.Futex;

    private Pending Of(int tid)
    {
        if (!_threads.TryGetValue(tid, out var p)) _threads[tid] = p = new Pending { Process = _processOf(tid) };
        return p;
    }

    private void Enter(in KernelEvent e)
    {
        var p = Of(e.CurrentTid);
        // Asked again at each lock call: a listing or fork seen since may have told the thread's process.
        p.Process = _processOf(e.CurrentTid);
        var address = (ulong)e.SyscallArg0;
        switch (e.SyscallArg1 & FutexCmdMask)
        {
            case 0 or 6 or 9 or 11 or 13:
                p.WaitAddress = address;
                p.WaitStack = e.StackId;
                p.WaitStart = e.Timestamp;
                p.ReleasedBy = 0;
                LockOf(p.Process, address, e.Timestamp);
                break;
            case 1 or 3 or 4 or 5 or 7 or 10 or 12:
                p.InWake = true;
                p.WakeAddress = address;
                p.WakeStack = e.StackId;
                break;
        }
    }

    private void Exit(in KernelEvent e)
    {
        if (!_threads.TryGetValue(e.CurrentTid, out var p)) return;
        if (p.InWake)
        {
            p.InWake = false;
            return;
        }

        if (p.WaitStart < 0) return;
        var waited = Math.Max(0, e.Timestamp - p.WaitStart);
        var lockStacks = LockOf(p.Process, p.WaitAddress, p.WaitStart);
        lockStacks.Waits++;
        lockStacks.WaitNanoseconds += waited;
        Add(lockStacks.Blocking, p.WaitStack, waited);
        if (p.ReleasedBy != 0) Add(lockStacks.Releasing, p.ReleasedBy, waited);
        p.WaitStart = -1;
        p.ReleasedBy = 0;
    }

    private void Waking(in KernelEvent e)
    {
        var irq = (e.Flags & EventFlags.HardIrq) != 0;
        if (e.WokenTid > 0)
        {
            var w = Of(e.WokenTid);
            w.Waker = irq || EventFlags.InInterrupt(e.Flags) ? 0 : e.CurrentTid;
            w.WakerStack = w.Waker == 0 ? 0 : e.StackId;
        }
        if (irq)
        {
            InterruptWakeups++;
            return;
        }

        if (!_threads.TryGetValue(e.CurrentTid, out var waker) || !waker.InWake) return;
        if (!_threads.TryGetValue(e.WokenTid, out var woken) || woken.WaitStart < 0) return;
        if (woken.WaitAddress != waker.WakeAddress || woken.Process != waker.Process) return;
        // Counted, with the time waited, when the woken thread's wait returns. Without a stack at the wake's entry
        // (`trace --stacks` records none there), the waking's own, taken inside the wake, has the same user frames.
        woken.ReleasedBy = waker.WakeStack != 0 ? waker.WakeStack : e.StackId;
    }

    private void Switch(in KernelEvent e)
    {
        if (!TaskState.IsPreempted(e.PrevState) && e.PrevTid != 0)
        {
            var p = Of(e.PrevTid);
            p.OffStack = _switchStackOfNext ? 0 : e.StackId;
            p.OffStart = e.Timestamp;
            // A futex wait whose entry carried no stack (`trace --stacks` records stacks where threads block, not at
            // every lock call) takes the stack where it blocked: the same user frames.
            if (p.WaitStart >= 0 && p.WaitStack == 0) p.WaitStack = p.OffStack;
        }

        if (e.NextTid == 0 || !_threads.TryGetValue(e.NextTid, out var next)) return;
        // ETW: the stack where the incoming thread had blocked arrives only now, with its switch-in.
        if (_switchStackOfNext && e.StackId != 0)
        {
            next.OffStack = e.StackId;
            if (next.WaitStart >= 0 && next.WaitStack == 0) next.WaitStack = e.StackId;
        }
        if (next.OffStart >= 0)
        {
            var off = Math.Max(0, e.Timestamp - next.OffStart);
            if (next.OffStack != 0)
            {
                Add(OffCpu, (next.Process, next.OffStack), off);
                Add(OffCpuByThread, (e.NextTid, next.OffStack), off);
                Add(OffWake, new OffWakeKey(next.Process, next.OffStack, next.Waker, next.WakerStack), off);
            }

            next.OffStart = -1;
        }
        // Running: the next interval's waker comes after this.
        next.Waker = next.WakerStack = 0;
    }

    private LockStacks LockOf(int process, ulong address, long time)
    {
        var key = new LockAddress(process, address);
        if (!Locks.TryGetValue(key, out var l)) Locks[key] = l = new LockStacks { FirstSeen = time };
        return l;
    }

    private static void Add<TKey>(Dictionary<TKey, StackTotals> into, TKey key, long ns) where TKey : notnull
    {
        if (!into.TryGetValue(key, out var t)) into[key] = t = new StackTotals();
        t.Count++;
        t.Nanoseconds += ns;
    }
}
