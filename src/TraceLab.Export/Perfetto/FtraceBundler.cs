using Perfetto.Protos;
using TraceLab.Core;

namespace TraceLab.Export.Perfetto;

/// <summary>
/// Turns TraceLab's scheduler events into Perfetto ftrace events (sched_switch, sched_waking, sched_wakeup_new,
/// sched_migrate_task, sched_process_exit, print), gathered per CPU into FtraceEventBundles of
/// <see cref="BundleSize"/> events. This is what makes ui.perfetto.dev draw CPU tracks, thread states and wakers.
/// A tid reused by a new thread is a new thread in Perfetto too (a new utid, as TraceLab's thread instances,
/// docs/metrics.md#thread-instances): a fork that says what it created is written as task_newtask (trace_processor
/// starts a new thread there), and an exited thread's last, dead switch-out is followed by sched_process_free
/// (trace_processor ends the thread there; the kernel logs it a little later, when the task is reaped).
/// Syscall and exec events, and forks that do not say whether they made a thread or a process, are not written
/// (counted in <see cref="Skipped"/>).
/// Memory: one open bundle per CPU; allocation per event is the protobuf messages themselves (export path, not
/// analysis).
/// </summary>
/// <param name="names">Thread names as the reader learns them (the comm fields of the written events).</param>
/// <param name="cpuLostEvents">Whether a CPU lost events (its first bundle is flagged lost_events).</param>
public sealed class FtraceBundler(
    PerfettoPacketWriter writer, ThreadTable names, Func<int, bool>? cpuLostEvents = null) : IKernelEventSink
{
    public const int BundleSize = 1000;

    private readonly PerfettoPacketWriter _writer = writer;
    private readonly ThreadTable _names = names;
    private readonly Dictionary<int, FtraceEventBundle> _open = new();
    private readonly HashSet<int> _lostReported = [];
    /// <summary>Threads whose exit was written and whose dead switch-out was not yet.</summary>
    private readonly HashSet<int> _exited = [];

    /// <summary>
    /// clone()'s CLONE_THREAD flag: trace_processor makes the new task a thread of its creator's process.
    /// </summary>
    private const ulong CloneThread = 0x00010000;
    private readonly Func<int, bool>? _cpuLostEvents = cpuLostEvents;

    public long Switches { get; private set; }
    public long Wakings { get; private set; }
    public long WakeupNews { get; private set; }
    public long Migrations { get; private set; }
    public long Exits { get; private set; }
    /// <summary>task_newtask events written (forks that say what they created).</summary>
    public long NewTasks { get; private set; }
    /// <summary>sched_process_free events written after an exited thread's dead switch-out.</summary>
    public long Frees { get; private set; }
    public long Prints { get; private set; }
    public long Skipped { get; private set; }

    public void OnEvent(in KernelEvent e)
    {
        var ev = new FtraceEvent
        {
            Timestamp = (ulong)Math.Max(0, e.Timestamp),
            Pid = (uint)Math.Max(0, e.CurrentTid),
            CommonFlags = e.Flags
        };
        switch (e.Kind)
        {
            case KernelEventKind.Switch:
                ev.SchedSwitch = new SchedSwitchFtraceEvent
                {
                    PrevComm = Comm(e.PrevTid, e.Cpu),
                    PrevPid = e.PrevTid,
                    PrevPrio = e.PrevPrio,
                    PrevState =
                        e.PrevState,
                    NextComm = Comm(e.NextTid, e.Cpu),
                    NextPid = e.NextTid,
                    NextPrio = e.NextPrio,
                };
                Switches++;
                Add(e.Cpu, ev);
                if (IsDeadSwitchOut(e) && _exited.Remove(e.PrevTid)) Add(e.Cpu, Free(e));
                return;
            case KernelEventKind.Waking:
                ev.SchedWaking = new SchedWakingFtraceEvent
                {
                    Comm = Comm(e.WokenTid, e.Cpu),
                    Pid = e.WokenTid,
                    Prio = e.WokenPrio,
                    Success = 1,
                    TargetCpu = e.TargetCpu,
                };
                Wakings++;
                break;
            case KernelEventKind.WakeupNew:
                ev.SchedWakeupNew = new SchedWakeupNewFtraceEvent
                {
                    Comm = Comm(e.WokenTid, e.Cpu),
                    Pid = e.WokenTid,
                    Prio = e.WokenPrio,
                    Success = 1,
                    TargetCpu = e.TargetCpu,
                };
                WakeupNews++;
                break;
            case KernelEventKind.Migrate:
                ev.SchedMigrateTask = new SchedMigrateTaskFtraceEvent
                {
                    Comm = Comm(e.MigratingTid, e.Cpu),
                    Pid = e.MigratingTid,
                    Prio = e.MigratingPrio,
                    OrigCpu = e.OrigCpu,
                    DestCpu = e.DestCpu,
                };
                Migrations++;
                break;
            case KernelEventKind.Exit:
                ev.SchedProcessExit = new SchedProcessExitFtraceEvent
                {
                    Comm = Comm(e.ExitingTid, e.Cpu),
                    Pid = e.ExitingTid,
                    Prio = e.ExitingPrio,
                };
                if (e.ExitingTid > 0) _exited.Add(e.ExitingTid);
                Exits++;
                break;
            case KernelEventKind.Fork when CloneFlags(e) is { } flags:
                ev.TaskNewtask = new TaskNewtaskFtraceEvent
                {
                    Pid = e.ChildTid,
                    Comm = Comm(e.ChildTid, e.Cpu),
                    CloneFlags = flags,
                };
                // The FtraceEvent's pid, the running thread, is the creator trace_processor binds the new task to
                // (on ETW the parent field holds the process id, the running thread the creating thread).
                // A fork of a tid whose exit was seen: the dead switch-out is no longer awaited.
                _exited.Remove(e.ChildTid);
                NewTasks++;
                break;
            case KernelEventKind.Marker when e.MarkerText is not null:
                // trace_marker writes keep their newline in ftrace's print buf.
                var text = e.MarkerText;
                ev.Print = new PrintFtraceEvent { Buf = text.EndsWith('\n') ? text : text + "\n" };
                Prints++;
                break;
            default:
                Skipped++;
                return;
        }
        Add(e.Cpu, ev);
    }

    private void Add(int cpu, FtraceEvent ev)
    {
        var bundle = Bundle(cpu);
        bundle.Event.Add(ev);
        if (bundle.Event.Count >= BundleSize) Flush(cpu, bundle);
    }

    private static bool IsDeadSwitchOut(in KernelEvent e) =>
        e.PrevTid > 0 && (e.PrevState & (TaskState.ExitDead | TaskState.ExitZombie)) != 0
        && !TaskState.IsPreempted(e.PrevState);

    /// <summary>The end of the thread that just left its CPU dead after its exit, at the same time.</summary>
    private FtraceEvent Free(in KernelEvent e)
    {
        Frees++;
        return new FtraceEvent
        {
            Timestamp = (ulong)Math.Max(0, e.Timestamp),
            Pid = (uint)Math.Max(0, e.CurrentTid),
            SchedProcessFree = new SchedProcessFreeFtraceEvent
            {
                Comm = Comm(e.PrevTid, e.Cpu),
                Pid = e.PrevTid,
                Prio = e.PrevPrio,
            },
        };
    }

    /// <summary>
    /// task_newtask's clone flags for a fork that says what it created (perf FORK records, tracefs task_newtask,
    /// or the reader's stated process of the child): CLONE_THREAD for a thread; null when the fork does not say
    /// (sched_process_fork alone, ETW thread starts without a stated process), which is then not written.
    /// </summary>
    private ulong? CloneFlags(in KernelEvent e)
    {
        if (e.ChildTid <= 0) return null;
        return e.ChildKind switch
        {
            ForkChild.Thread => CloneThread,
            ForkChild.Process => 0,
            _ => _names.TryGetProcess(e.ChildTid, out var pid) ? pid == e.ChildTid ? 0 : CloneThread : null,
        };
    }

    /// <summary>The idle task is "swapper/N" in ftrace, which is what trace_processor expects for pid 0.</summary>
    private string Comm(int tid, int cpu) => tid == 0 ? $"swapper/{cpu}" : _names.NameOf(tid);

    private FtraceEventBundle Bundle(int cpu)
    {
        if (_open.TryGetValue(cpu, out var b)) return b;
        b = new FtraceEventBundle { Cpu = (uint)Math.Max(0, cpu) };
        if (_lostReported.Add(cpu) && _cpuLostEvents?.Invoke(cpu) == true) b.LostEvents = true;
        _open[cpu] = b;
        return b;
    }

    private void Flush(int cpu, FtraceEventBundle bundle)
    {
        _writer.Write(new TracePacket { FtraceEvents = bundle });
        _open.Remove(cpu);
    }

    /// <summary>Writes the bundles still open. Call once after the last event.</summary>
    public void Complete()
    {
        foreach (var (cpu, bundle) in _open.OrderBy(kv => kv.Key).ToList()) Flush(cpu, bundle);
    }
}
