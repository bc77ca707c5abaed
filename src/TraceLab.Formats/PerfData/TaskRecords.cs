using System.Buffers.Binary;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// The kernel's own task records — SWITCH, SWITCH_CPU_WIDE, FORK, EXIT — as events, where the file has no tracepoint
/// giving the same facts. The rule is per file, from its attributes, so a fact is never counted twice:
/// <list type="bullet">
/// <item>switches come from sched:sched_switch samples when that tracepoint was recorded; otherwise from
/// SWITCH_CPU_WIDE records (perf record -a --switch-events): each switch-out record is one switch, prev = the
/// record's thread (its sample id), next = its next_prev_tid; the switch-in record of the same switch is not counted
/// again. Per-task SWITCH records (--switch-events without -a) see only the recorded threads: a switch-out is
/// "thread → tid 0", a switch-in "tid 0 → thread" (whatever ran between is attributed to no thread);</item>
/// <item>prev_state: R when the record says preempted (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT), X when the thread's EXIT
/// record came before, else S (the records do not tell S from D); priorities are not in the records (-1);</item>
/// <item>a dying thread's last switch-out carries tid -1 (the kernel's value for a task no longer alive): prev is then
/// the thread the CPU's previous switch-out record brought in, with prev_state X;</item>
/// <item>FORK records are fork events when sched:sched_process_fork was not recorded, EXIT records exit events when
/// sched:sched_process_exit was not.</item>
/// </list>
/// A record is placed by its sample id trailer (time, CPU, thread), so records without one (no sample_id_all, or
/// a per-task recording without --sample-cpu) are counted but cannot be events; nor are the FORK records perf
/// synthesizes at time 0 for the threads already running when it starts.
/// </summary>
internal sealed class TaskRecords
{
    /// <summary>Priorities are not in perf's task records.</summary>
    public const int UnknownPrio = -1;

    private readonly SampleIdTrailer _trailer;
    private readonly bool _switches, _forks, _exits;
    /// <summary>Threads whose EXIT record the scan has seen and whose last switch-out is not delivered yet.</summary>
    private readonly HashSet<int> _exited = new();
    /// <summary>
    /// Per CPU, the thread the last switch-out record delivered switched in (for a dead prev, see <see cref="Build"/>).
    /// </summary>
    private int[] _running = new int[64];

    public TaskRecords(IReadOnlyList<PerfEventAttr> attrs, IReadOnlyList<FtraceEventFormat> formats,
        SampleIdTrailer trailer)
    {
        _trailer = trailer;
        bool Recorded(string name) => formats.Any(f => f.System == "sched" && f.Name == name
            && attrs.Any(a => a.IsTracepoint && a.Config == (ulong)f.Id));
        var placed = trailer.Places;
        _switches = placed && attrs.Any(a => a.ContextSwitch) && !Recorded("sched_switch");
        _forks = placed && !Recorded("sched_process_fork");
        _exits = placed && !Recorded("sched_process_exit");
    }

    /// <summary>
    /// Switch events come from SWITCH / SWITCH_CPU_WIDE records (no sched_switch tracepoint in the file).
    /// </summary>
    public bool SwitchesFromRecords => _switches;

    /// <summary>True when the record of <paramref name="type"/> with <paramref name="misc"/> is an event.</summary>
    public bool IsEvent(uint type, ushort misc) => type switch
    {
        // Of a CPU-wide switch, the switch-out record says both threads; its switch-in record repeats the switch.
        PerfRecordType.SwitchCpuWide => _switches && (misc & PerfSwitchMisc.Out) != 0,
        PerfRecordType.Switch => _switches,
        PerfRecordType.Fork => _forks,
        PerfRecordType.Exit => _exits,
        _ => false,
    };

    /// <summary>
    /// What the scan (in file order) notes of a task record, event or not: exits and forks of threads.
    /// </summary>
    public void Scan(uint type, ReadOnlySpan<byte> body)
    {
        if (!_switches || body.Length < 16) return;
        var tid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[8..]);
        if (type == PerfRecordType.Exit) _exited.Add(tid);
        else if (type == PerfRecordType.Fork) _exited.Remove(tid);
    }

    /// <summary>Time and CPU of a task record, from its sample id trailer; false when it has none.</summary>
    public bool Place(uint type, ReadOnlySpan<byte> body, out long time, out int cpu)
    {
        time = _trailer.Time(body);
        cpu = _trailer.Cpu(body);
        // Time 0: perf record's own FORK/COMM records for the threads that existed when it started (synthesized,
        // not the kernel's), which say nothing about when those threads began.
        return body.Length >= _trailer.Size + MinBody(type) && time > 0;
    }

    /// <summary>The event of a record <see cref="IsEvent"/> accepted (at delivery, in time order).</summary>
    public void Build(uint type, ushort misc, ReadOnlySpan<byte> body, long time, int cpu, ref KernelEvent e)
    {
        switch (type)
        {
            case PerfRecordType.SwitchCpuWide:
                {
                    var prev = _trailer.Tid(body);
                    var next = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[4..]);
                    if ((uint)cpu >= (uint)_running.Length)
                        Array.Resize(ref _running, Math.Max(cpu + 1, 2 * _running.Length));
                    var state = OutState(prev, misc);
                    if (prev == -1)
                    {
                        // The kernel writes -1 for a task no longer alive (perf_event_pid_type): the thread that
                        // exited, the one the CPU's previous switch brought in.
                        prev = _running[cpu];
                        state = TaskState.ExitDead;
                    }

                    _running[cpu] = next;
                    e = KernelEvent.Switch(time, cpu, prev, UnknownPrio, state, next, UnknownPrio);
                    break;
                }
            case PerfRecordType.Switch:
                {
                    var tid = _trailer.Tid(body);
                    e = (misc & PerfSwitchMisc.Out) != 0
                        ? KernelEvent.Switch(time, cpu, tid, UnknownPrio, OutState(tid, misc), 0, UnknownPrio)
                        : KernelEvent.Switch(time, cpu, 0, UnknownPrio, TaskState.Running, tid, UnknownPrio);
                    break;
                }
            case PerfRecordType.Fork:
                {
                    // u32 pid, ppid, tid, ptid, u64 time. pid is the child's process: its own tid for a new process.
                    var childTid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[8..]);
                    var childPid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body);
                    e = KernelEvent.Fork(time, cpu, (int)BinaryPrimitives.ReadUInt32LittleEndian(body[12..]), childTid,
                        childPid == childTid ? ForkChild.Process : ForkChild.Thread);
                    break;
                }
            default:
                e = KernelEvent.Exit(time, cpu, (int)BinaryPrimitives.ReadUInt32LittleEndian(body[8..]));
                break;
        }
    }

    private long OutState(int tid, ushort misc)
    {
        if ((misc & PerfSwitchMisc.OutPreempt) != 0) return TaskState.Running;
        return _exited.Remove(tid) ? TaskState.ExitDead : TaskState.Interruptible;
    }

    /// <summary>The smallest body each event record needs besides its trailer.</summary>
    private static int MinBody(uint type) => type switch
    {
        PerfRecordType.SwitchCpuWide => 8,
        PerfRecordType.Switch => 0,
        _ => 24,
    };
}
