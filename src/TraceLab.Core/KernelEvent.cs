namespace TraceLab.Core;

/// <summary>
/// One kernel event in TraceLab's backend-neutral model. A flat struct (no per-event allocation):
/// the meaning of the generic fields depends on <see cref="Kind"/>, and the named accessors below say which is which.
/// </summary>
public struct KernelEvent
{
    /// <summary>Nanoseconds on the trace clock.</summary>
    public long Timestamp;
    /// <summary>CPU the event was logged on.</summary>
    public int Cpu;
    /// <summary>The thread running on <see cref="Cpu"/> when the event was logged (ftrace common_pid, ETW header thread).</summary>
    public int Pid;
    public KernelEventKind Kind;
    /// <summary>ftrace common_flags (see <see cref="EventFlags"/>): tells interrupt context from thread context.</summary>
    public byte Flags;

    public int Tid;
    public int Tid2;
    public int Prio;
    public int Prio2;
    /// <summary>Switch: prev_state (Linux task state bits; see <see cref="TaskState"/>).</summary>
    public long State;
    public int Cpu2;
    public int Cpu3;
    public int SyscallNr;
    public long Arg0;
    public long Arg1;
    public long Arg2;
    public long Arg3;
    public long Ret;
    /// <summary>Marker text or exec file name; null for every other kind (no allocation on the hot path).</summary>
    public string? Text;

    // Switch
    public readonly int PrevTid => Tid;
    public readonly int NextTid => Tid2;
    public readonly int PrevPrio => Prio;
    public readonly int NextPrio => Prio2;
    public readonly long PrevState => State;
    /// <summary>
    /// Switch: why the previous thread waits, when the backend records it (ETW CSwitch OldThreadWaitReason, a
    /// KWAIT_REASON number); -1 when unknown (Linux). Stored as reason + 1 in <see cref="Arg0"/> so that a
    /// default-initialized event means "unknown".
    /// </summary>
    public readonly int PrevWaitReason => (int)Arg0 - 1;

    // Waking / WakeupNew
    public readonly int WokenTid => Tid;
    public readonly int TargetCpu => Cpu2;

    // Migrate
    public readonly int OrigCpu => Cpu2;
    public readonly int DestCpu => Cpu3;

    // Fork
    public readonly int ParentTid => Tid;
    public readonly int ChildTid => Tid2;

    public static KernelEvent Switch(long ts, int cpu, int prevTid, int prevPrio, long prevState, int nextTid, int nextPrio,
        int prevWaitReason = -1) => new()
    {
        Timestamp = ts, Cpu = cpu, Pid = prevTid, Kind = KernelEventKind.Switch,
        Tid = prevTid, Prio = prevPrio, State = prevState, Tid2 = nextTid, Prio2 = nextPrio, Arg0 = prevWaitReason + 1,
    };

    public static KernelEvent Waking(long ts, int cpu, int waker, int woken, int targetCpu) => new()
    {
        Timestamp = ts, Cpu = cpu, Pid = waker, Kind = KernelEventKind.Waking, Tid = woken, Cpu2 = targetCpu,
    };

    public static KernelEvent WakeupNew(long ts, int cpu, int waker, int woken, int targetCpu) => new()
    {
        Timestamp = ts, Cpu = cpu, Pid = waker, Kind = KernelEventKind.WakeupNew, Tid = woken, Cpu2 = targetCpu,
    };

    public static KernelEvent Migrate(long ts, int cpu, int pid, int tid, int origCpu, int destCpu) => new()
    {
        Timestamp = ts, Cpu = cpu, Pid = pid, Kind = KernelEventKind.Migrate, Tid = tid, Cpu2 = origCpu, Cpu3 = destCpu,
    };

    public static KernelEvent Fork(long ts, int cpu, int parent, int child) => new()
    {
        Timestamp = ts, Cpu = cpu, Pid = parent, Kind = KernelEventKind.Fork, Tid = parent, Tid2 = child,
    };

    public static KernelEvent Exit(long ts, int cpu, int tid) => new()
    {
        Timestamp = ts, Cpu = cpu, Pid = tid, Kind = KernelEventKind.Exit, Tid = tid,
    };

    public static KernelEvent Marker(long ts, int cpu, int pid, string text) => new()
    {
        Timestamp = ts, Cpu = cpu, Pid = pid, Kind = KernelEventKind.Marker, Tid = pid, Text = text,
    };

    public override readonly string ToString() => Kind switch
    {
        KernelEventKind.Switch => $"{Timestamp} [{Cpu}] switch {PrevTid} ({TaskState.Format(PrevState)}) -> {NextTid}",
        KernelEventKind.Waking => $"{Timestamp} [{Cpu}] {Pid} wakes {WokenTid} on cpu {TargetCpu}",
        KernelEventKind.WakeupNew => $"{Timestamp} [{Cpu}] {Pid} wakes new {WokenTid} on cpu {TargetCpu}",
        KernelEventKind.Migrate => $"{Timestamp} [{Cpu}] migrate {Tid} {OrigCpu} -> {DestCpu}",
        KernelEventKind.Fork => $"{Timestamp} [{Cpu}] fork {ParentTid} -> {ChildTid}",
        KernelEventKind.SyscallEnter => $"{Timestamp} [{Cpu}] {Pid} enter syscall {SyscallNr} ({Arg0:x}, {Arg1}, {Arg2})",
        KernelEventKind.SyscallExit => $"{Timestamp} [{Cpu}] {Pid} exit syscall {SyscallNr} = {Ret}",
        _ => $"{Timestamp} [{Cpu}] {Kind} pid {Pid} tid {Tid} {Text}",
    };
}
