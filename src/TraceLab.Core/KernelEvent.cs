namespace TraceLab.Core;

/// <summary>
/// One kernel event in TraceLab's backend-neutral model. A flat struct (no per-event allocation): the header fields
/// (<see cref="Timestamp"/>, <see cref="Cpu"/>, <see cref="CurrentTid"/>, <see cref="Kind"/>, <see cref="Flags"/>) mean
/// the same for every kind; the rest is generic storage, internal to Core and the readers, whose meaning depends on
/// <see cref="Kind"/>. Consumers read it through the named accessors of each kind and build events with the factories
/// (KernelEvent.Accessors.cs); <see cref="KernelEventPacking"/> lists the storage once for the packed hand-off.
/// </summary>
public partial struct KernelEvent
{
    /// <summary>Nanoseconds on the trace clock.</summary>
    public long Timestamp;
    /// <summary>CPU the event was logged on.</summary>
    public int Cpu;
    /// <summary>
    /// The thread running on <see cref="Cpu"/> when the event was logged (ftrace common_pid, ETW header thread): the
    /// waker of a wakeup, the caller of a syscall, the writer of a marker. A thread id, whatever the trace format
    /// calls the field.
    /// </summary>
    public int CurrentTid;
    public KernelEventKind Kind;
    /// <summary>
    /// ftrace common_flags (see <see cref="EventFlags"/>): tells interrupt context from thread context.
    /// </summary>
    public byte Flags;

    // Generic storage. Which kind uses which slot is spelled out once, by the accessors and factories.
    internal int Tid;
    internal int Tid2;
    internal int Prio;
    internal int Prio2;
    internal long State;
    internal int Cpu2;
    internal int Cpu3;
    internal int SyscallNr;
    internal long Arg0;
    internal long Arg1;
    internal long Arg2;
    internal long Arg3;
    internal long Ret;
    /// <summary>
    /// Switch: the KWAIT_REASON the previous thread waits for, plus one; 0 (what a default event holds) means the
    /// backend records none (Linux). ETW logs the reason as a byte, so any of its 256 values fits, in the two bytes
    /// of the struct's padding.
    /// </summary>
    internal ushort WaitReasonPlusOne;
    /// <summary>
    /// The call stack recorded with the event: an id in the reader's <see cref="StackTable"/> (0: none), so that a
    /// stack costs the event four bytes and no allocation.
    /// </summary>
    internal int Stack;
    /// <summary>
    /// Marker text, exec file name or an exiting thread's comm; null for every other kind (no allocation on the hot
    /// path).
    /// </summary>
    internal string? Text;

    public override readonly string ToString() => Kind switch
    {
        KernelEventKind.Switch => $"{Timestamp} [{Cpu}] switch {PrevTid} ({TaskState.Format(PrevState)}) -> {NextTid}",
        KernelEventKind.Waking => $"{Timestamp} [{Cpu}] {CurrentTid} wakes {WokenTid} on cpu {TargetCpu}",
        KernelEventKind.WakeupNew => $"{Timestamp} [{Cpu}] {CurrentTid} wakes new {WokenTid} on cpu {TargetCpu}",
        KernelEventKind.Migrate => $"{Timestamp} [{Cpu}] migrate {MigratingTid} {OrigCpu} -> {DestCpu}",
        KernelEventKind.Fork => $"{Timestamp} [{Cpu}] fork {ParentTid} -> {ChildTid}" +
            (ChildKind == ForkChild.Unknown ? "" : $" ({ChildKind})"),
        KernelEventKind.Exec => $"{Timestamp} [{Cpu}] exec {ExecTid} {ExecFileName}",
        KernelEventKind.Exit => $"{Timestamp} [{Cpu}] exit {ExitingTid}",
        KernelEventKind.SyscallEnter when !HasSyscallNumber =>
            $"{Timestamp} [{Cpu}] {CurrentTid} enter syscall at {SyscallAddress:x}",
        KernelEventKind.SyscallEnter =>
            $"{Timestamp} [{Cpu}] {CurrentTid} enter syscall {SyscallNumber} "
            + $"({SyscallArg0:x}, {SyscallArg1}, {SyscallArg2})",
        KernelEventKind.SyscallExit => $"{Timestamp} [{Cpu}] {CurrentTid} exit syscall {SyscallNr} = {SyscallResult}",
        KernelEventKind.Marker => $"{Timestamp} [{Cpu}] {CurrentTid} marker {MarkerText}",
        _ => $"{Timestamp} [{Cpu}] {Kind} tid {CurrentTid}",
    };
}
