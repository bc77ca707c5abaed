using TraceLab.Core;

namespace TraceLab.Formats.Etw;

/// <summary>
/// Maps classic ETW kernel events (header + raw payload) onto <see cref="KernelEvent"/>s, the way
/// <see cref="Ftrace.KernelEventDecoder"/> does for ftrace, so analyzers see one model. Per event only span reads
/// happen; thread names allocate only when a thread's name changes.
/// </summary>
/// <remarks>
/// Conventions: <see cref="KernelEvent.CurrentTid"/> is the thread running on the CPU (the header thread, or the CPU's
/// current thread when the header says -1). The idle thread is tid 0 on both backends. ETW thread events become
/// Fork(parent = process id, child = thread id), so descendants of a process id are its threads.
/// </remarks>
public sealed class EtwKernelEventMapper(ThreadTable threads, ThreadProcessMap processes)
{
    private readonly RunningThreads _running = new();

    public ThreadTable Threads { get; } = threads;
    public ThreadProcessMap Processes { get; } = processes;

    /// <summary>
    /// Fills <paramref name="e"/>. Events TraceLab does not model become <see cref="KernelEventKind.Other"/> (with
    /// timestamp, CPU and running thread). Returns false, leaving such an Other event, when the payload is too short
    /// for the event its header declares; never throws on payload contents.
    /// </summary>
    public bool Map(in EtwEventHeader header, ReadOnlySpan<byte> payload, ref KernelEvent e)
    {
        e = default;
        e.Timestamp = header.Timestamp;
        e.Cpu = header.Cpu;
        e.CurrentTid = _running.Resolve(header.Cpu, header.ThreadId);

        if (header.EventGuid == EtwKernelEvents.ThreadGuid)
        {
            return header.Opcode switch
            {
                EtwKernelEvents.CSwitch => MapSwitch(header, payload, ref e),
                EtwKernelEvents.ReadyThread => MapReadyThread(header, payload, ref e),
                EtwKernelEvents.ThreadStart or EtwKernelEvents.ThreadDCStart
                    or EtwKernelEvents.ThreadEnd or EtwKernelEvents.ThreadDCEnd => MapThread(header, payload, ref e),
                EtwKernelEvents.ThreadSetName => MapSetName(payload),
                _ => true,
            };
        }

        if (header.EventGuid == EtwKernelEvents.ProcessGuid)
        {
            return header.Opcode switch
            {
                EtwKernelEvents.ProcessStart or EtwKernelEvents.ProcessEnd or EtwKernelEvents.ProcessDCStart
                    or EtwKernelEvents.ProcessDCEnd or EtwKernelEvents.ProcessDefunct => MapProcess(header, payload),
                _ => true,
            };
        }

        if (header.EventGuid == EtwKernelEvents.PerfInfoGuid)
        {
            return header.Opcode switch
            {
                EtwKernelEvents.SysClEnter => MapSyscallEnter(header, payload, ref e),
                EtwKernelEvents.SysClExit => MapSyscallExit(payload, ref e),
                _ => true,
            };
        }

        return true;
    }

    private bool MapSwitch(in EtwEventHeader h, ReadOnlySpan<byte> payload, ref KernelEvent e)
    {
        if (!CSwitchRecord.TryRead(payload, out var r)) return false;
        e = KernelEvent.Switch(h.Timestamp, h.Cpu, r.OldThreadId, r.OldThreadPriority,
            SwitchOutState.ToTaskState(r.OldThreadState, r.OldThreadWaitMode), r.NewThreadId, r.NewThreadPriority,
            r.OldThreadWaitReason);
        _running.OnSwitch(h.Cpu, r.NewThreadId);
        return true;
    }

    /// <remarks>
    /// ReadyThread does not say where the thread will run, so TargetCpu is the readying CPU, not a scheduler choice
    /// as on Linux. Nothing in the analyzers relies on it; the next CSwitch naming the thread says where it ran.
    /// </remarks>
    private static bool MapReadyThread(in EtwEventHeader h, ReadOnlySpan<byte> payload, ref KernelEvent e)
    {
        if (!ReadyThreadRecord.TryRead(payload, out var r)) return false;
        e = KernelEvent.Waking(h.Timestamp, h.Cpu, e.CurrentTid, r.ThreadId, h.Cpu);
        // From a DPC the header thread merely got interrupted; marking it like a Linux softirq keeps analyzers from
        // crediting that thread as the waker.
        if (r.FromDpc) e.Flags = EventFlags.SoftIrq;
        return true;
    }

    private bool MapThread(in EtwEventHeader h, ReadOnlySpan<byte> payload, ref KernelEvent e)
    {
        if (!ThreadRecord.TryRead(payload, h.Version, h.PointerSize, out var r)) return false;
        SetProcess(r.ThreadId, r.ProcessId);
        Utf16ThreadName.Record(Threads, r.ThreadId, r.NameUtf16);
        NameAfterImage(r.ThreadId, r.ProcessId);
        var running = e.CurrentTid;
        switch (h.Opcode)
        {
            case EtwKernelEvents.ThreadStart:
            case EtwKernelEvents.ThreadDCStart:
                e = KernelEvent.Fork(h.Timestamp, h.Cpu, r.ProcessId, r.ThreadId);
                e.CurrentTid = running;
                break;
            case EtwKernelEvents.ThreadEnd:
                e = KernelEvent.Exit(h.Timestamp, h.Cpu, r.ThreadId);
                e.CurrentTid = running;
                break;
                // DCEnd lists threads still alive when the session stops: membership and name only.
        }

        return true;
    }

    private bool MapSetName(ReadOnlySpan<byte> payload)
    {
        if (!ThreadRecord.TryReadSetName(payload, out var r)) return false;
        SetProcess(r.ThreadId, r.ProcessId);
        Utf16ThreadName.Record(Threads, r.ThreadId, r.NameUtf16);
        return true;
    }

    /// <summary>
    /// A thread event's ProcessId, in this reader's map and in the thread table, where reports group threads into
    /// processes (<see cref="ThreadTable.Processes"/>).
    /// </summary>
    private void SetProcess(int tid, int pid)
    {
        Processes.Set(tid, pid);
        Threads.SetProcess(tid, pid);
    }

    /// <summary>
    /// Process events name the process (its image file); they stay Other events in the model. The image also names
    /// the process id in the thread table (Windows gives threads and processes ids from one table, so no thread of
    /// the trace has a live process's id), which is how reports name a process; a thread's own name is kept.
    /// </summary>
    private bool MapProcess(in EtwEventHeader h, ReadOnlySpan<byte> payload)
    {
        if (!ProcessRecord.TryRead(payload, h.Version, h.PointerSize, out var r)) return false;
        Processes.SetImage(r.ProcessId, r.ImageName);
        if (r.ProcessId > 0 && !Threads.TryGetName(r.ProcessId, out _)
            && Processes.TryGetImage(r.ProcessId, out var image))
            Threads.SetName(r.ProcessId, image);
        return true;
    }

    /// <summary>
    /// A thread without a name of its own is called after its process's image, as Linux names a thread after its
    /// process (comm) until it is renamed; a later SetName or thread name replaces it.
    /// </summary>
    private void NameAfterImage(int tid, int pid)
    {
        if (tid <= 0 || Threads.TryGetName(tid, out _)) return;
        if (Processes.TryGetImage(pid, out var image)) Threads.SetName(tid, image);
    }

    /// <remarks>
    /// ETW logs the service routine's address, not a syscall number: SyscallNr is -1, Arg0 the address.
    /// </remarks>
    private static bool MapSyscallEnter(in EtwEventHeader h, ReadOnlySpan<byte> payload, ref KernelEvent e)
    {
        if (!SysCallRecord.TryReadEnter(payload, h.PointerSize, out var address)) return false;
        e.Kind = KernelEventKind.SyscallEnter;
        e.SyscallNr = -1;
        e.Arg0 = address;
        return true;
    }

    private static bool MapSyscallExit(ReadOnlySpan<byte> payload, ref KernelEvent e)
    {
        if (!SysCallRecord.TryReadExit(payload, out var status)) return false;
        e.Kind = KernelEventKind.SyscallExit;
        e.SyscallNr = -1;
        e.Ret = status;
        return true;
    }
}
