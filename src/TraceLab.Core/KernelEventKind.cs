namespace TraceLab.Core;

/// <summary>The scheduler and syscall events every capture backend maps onto.</summary>
public enum KernelEventKind : byte
{
    /// <summary>Not an event TraceLab models (kept so readers can count it).</summary>
    Other = 0,
    /// <summary>
    /// Context switch: <see cref="KernelEvent.Tid"/> (prev) leaves, <see cref="KernelEvent.Tid2"/> (next) runs.
    /// </summary>
    Switch,
    /// <summary>
    /// A thread is being woken (sched_waking / ETW ReadyThread): <see cref="KernelEvent.Tid"/> woken by
    /// <see cref="KernelEvent.CurrentTid"/>.
    /// </summary>
    Waking,
    /// <summary>A new thread is made runnable for the first time (sched_wakeup_new).</summary>
    WakeupNew,
    /// <summary>
    /// A thread moves between CPUs: <see cref="KernelEvent.Tid"/> from <see cref="KernelEvent.Cpu2"/> to
    /// <see cref="KernelEvent.Cpu3"/>.
    /// </summary>
    Migrate,
    /// <summary>
    /// A task is created: parent <see cref="KernelEvent.Tid"/>, child <see cref="KernelEvent.Tid2"/>.
    /// </summary>
    Fork,
    /// <summary>A task execs a program (<see cref="KernelEvent.Text"/> = file name).</summary>
    Exec,
    /// <summary>A task exits.</summary>
    Exit,
    /// <summary>
    /// Syscall entry by <see cref="KernelEvent.CurrentTid"/>: number in <see cref="KernelEvent.SyscallNr"/>, args in
    /// Arg0..Arg3.
    /// </summary>
    SyscallEnter,
    /// <summary>
    /// Syscall return by <see cref="KernelEvent.CurrentTid"/>: number in <see cref="KernelEvent.SyscallNr"/>, result in
    /// <see cref="KernelEvent.Ret"/>.
    /// </summary>
    SyscallExit,
    /// <summary>
    /// An annotation written by the traced program (trace_marker / TraceLogging): <see cref="KernelEvent.Text"/>.
    /// </summary>
    Marker,
}
