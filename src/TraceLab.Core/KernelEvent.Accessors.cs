namespace TraceLab.Core;

/// <summary>Per kind: the factory that builds the event and the accessors that read it, in one place.</summary>
public partial struct KernelEvent
{
    /// <summary>What every kind has: when, where, and the thread that logged it.</summary>
    private static KernelEvent Of(long ts, int cpu, int current, KernelEventKind kind) =>
        new() { Timestamp = ts, Cpu = cpu, CurrentTid = current, Kind = kind };

    // ---- Any kind: the call stack recorded with the event, for the thread that logged it (Pid; a switch's PrevTid).
    /// <summary>
    /// The event's call stack: an id in the reader's <see cref="StackTable"/> (<see cref="IStackTraceReader"/>); 0 when
    /// the trace recorded none for it.
    /// </summary>
    public readonly int StackId => Stack;

    /// <summary>The same event with the call stack <paramref name="stackId"/> (0: none).</summary>
    public readonly KernelEvent WithStack(int stackId)
    {
        var e = this;
        e.Stack = stackId;
        return e;
    }

    // ---- Switch: PrevTid leaves the CPU, NextTid runs.
    public readonly int PrevTid => Tid;
    public readonly int PrevPrio => Prio;
    /// <summary>prev_state (Linux task state bits, see <see cref="TaskState"/>); ETW states are mapped onto them.
    /// </summary>
    public readonly long PrevState => State;
    public readonly int NextTid => Tid2;
    public readonly int NextPrio => Prio2;
    /// <summary>Whether the backend says why the previous thread waits (ETW CSwitch does, Linux does not).</summary>
    public readonly bool HasPrevWaitReason => WaitReasonPlusOne != 0;
    /// <summary>Why the previous thread waits (ETW OldThreadWaitReason, a KWAIT_REASON); -1 when unknown.</summary>
    public readonly int PrevWaitReason => WaitReasonPlusOne - 1;

    /// <param name="prevWaitReason">A KWAIT_REASON (ETW: 0..255); -1 (or anything negative): unknown.</param>
    public static KernelEvent Switch(long ts, int cpu, int prevTid, int prevPrio, long prevState, int nextTid,
        int nextPrio, int prevWaitReason = -1) =>
        Of(ts, cpu, prevTid, KernelEventKind.Switch) with
        {
            Tid = prevTid,
            Prio = prevPrio,
            State = prevState,
            Tid2 = nextTid,
            Prio2 = nextPrio,
            WaitReasonPlusOne = prevWaitReason is >= 0 and < ushort.MaxValue ? (ushort)(prevWaitReason + 1) : (ushort)0,
        };

    // ---- Waking / WakeupNew: Pid (the waker) makes WokenTid runnable, to run on TargetCpu.
    public readonly int WokenTid => Tid;
    public readonly int WokenPrio => Prio;
    public readonly int TargetCpu => Cpu2;

    public static KernelEvent Waking(long ts, int cpu, int waker, int woken, int targetCpu, int wokenPrio = 0) =>
        Of(ts, cpu, waker, KernelEventKind.Waking) with { Tid = woken, Cpu2 = targetCpu, Prio = wokenPrio };

    public static KernelEvent WakeupNew(long ts, int cpu, int waker, int woken, int targetCpu, int wokenPrio = 0) =>
        Of(ts, cpu, waker, KernelEventKind.WakeupNew) with { Tid = woken, Cpu2 = targetCpu, Prio = wokenPrio };

    // ---- Migrate: MigratingTid moves from OrigCpu to DestCpu.
    public readonly int MigratingTid => Tid;
    public readonly int MigratingPrio => Prio;
    public readonly int OrigCpu => Cpu2;
    public readonly int DestCpu => Cpu3;

    public static KernelEvent Migrate(long ts, int cpu, int pid, int tid, int origCpu, int destCpu, int prio = 0) =>
        Of(ts, cpu, pid, KernelEventKind.Migrate) with { Tid = tid, Cpu2 = origCpu, Cpu3 = destCpu, Prio = prio };

    // ---- Fork: ParentTid creates ChildTid, a thread of the parent's process or a process of its own (ChildKind).
    public readonly int ParentTid => Tid;
    public readonly int ChildTid => Tid2;
    public readonly ForkChild ChildKind => (ForkChild)Prio;

    public static KernelEvent Fork(long ts, int cpu, int parent, int child, ForkChild kind = ForkChild.Unknown) =>
        Of(ts, cpu, parent, KernelEventKind.Fork) with { Tid = parent, Tid2 = child, Prio = (int)kind };

    // ---- Exec: ExecTid runs ExecFileName; OldExecTid is its tid before (they differ when a non-leader thread execs).
    public readonly int ExecTid => Tid;
    public readonly int OldExecTid => Tid2;
    public readonly string? ExecFileName => Text;

    public static KernelEvent Exec(long ts, int cpu, int pid, int tid, int oldTid, string fileName) =>
        Of(ts, cpu, pid, KernelEventKind.Exec) with { Tid = tid, Tid2 = oldTid, Text = fileName };

    // ---- Exit: ExitingTid ends.
    public readonly int ExitingTid => Tid;
    public readonly int ExitingPrio => Prio;
    /// <summary>The thread's name as it exits (sched_process_exit's comm); null when the backend logs none.</summary>
    public readonly string? ExitingComm => Text;

    public static KernelEvent Exit(long ts, int cpu, int tid, int prio = 0, string? comm = null) =>
        Of(ts, cpu, tid, KernelEventKind.Exit) with { Tid = tid, Prio = prio, Text = comm };

    // ---- SyscallEnter / SyscallExit, made by Pid. Linux logs a number; ETW logs the service routine's address.
    /// <summary>Whether <see cref="SyscallNumber"/> is known (Linux); else see <see cref="SyscallAddress"/>.</summary>
    public readonly bool HasSyscallNumber => SyscallNr >= 0;
    /// <summary>The syscall number (Linux); -1 when the backend logs an address instead.</summary>
    public readonly int SyscallNumber => SyscallNr;
    /// <summary>Enter, ETW: the kernel address of the syscall's service routine; 0 with a syscall number.</summary>
    public readonly long SyscallAddress => SyscallNr < 0 ? Arg0 : 0;
    public readonly long SyscallArg0 => Arg0;
    public readonly long SyscallArg1 => Arg1;
    public readonly long SyscallArg2 => Arg2;
    public readonly long SyscallArg3 => Arg3;
    /// <summary>Exit: the return value (Linux) or NTSTATUS (ETW).</summary>
    public readonly long SyscallResult => Ret;

    public static KernelEvent SyscallEnter(long ts, int cpu, int tid, int number, long arg0 = 0, long arg1 = 0,
        long arg2 = 0, long arg3 = 0) =>
        Of(ts, cpu, tid, KernelEventKind.SyscallEnter) with
        {
            SyscallNr = number,
            Arg0 = arg0,
            Arg1 = arg1,
            Arg2 = arg2,
            Arg3 = arg3,
        };

    /// <summary>An ETW syscall entry: the service routine's address instead of a number.</summary>
    public static KernelEvent SyscallEnterAt(long ts, int cpu, int tid, long address) =>
        Of(ts, cpu, tid, KernelEventKind.SyscallEnter) with { SyscallNr = -1, Arg0 = address };

    /// <param name="number">The syscall number; -1 when the backend does not log it (ETW).</param>
    public static KernelEvent SyscallExit(long ts, int cpu, int tid, int number, long result) =>
        Of(ts, cpu, tid, KernelEventKind.SyscallExit) with { SyscallNr = number, Ret = result };

    // ---- Marker: text written by the traced program (trace_marker, TraceLogging), by Pid.
    public readonly string? MarkerText => Text;

    public static KernelEvent Marker(long ts, int cpu, int pid, string text) =>
        Of(ts, cpu, pid, KernelEventKind.Marker) with { Tid = pid, Text = text };
}
