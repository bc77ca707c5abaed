using Perfetto.Protos;
using TraceLab.Core;

namespace TraceLab.Export.Perfetto;

/// <summary>
/// Turns TraceLab's scheduler events into Perfetto ftrace events (sched_switch, sched_waking, sched_wakeup_new,
/// sched_migrate_task, sched_process_exit, print), gathered per CPU into FtraceEventBundles of
/// <see cref="BundleSize"/> events. This is what makes ui.perfetto.dev draw CPU tracks, thread states and wakers.
/// Syscall, fork and exec events are not written (counted in <see cref="Skipped"/>).
/// Memory: one open bundle per CPU; allocation per event is the protobuf messages themselves (export path, not analysis).
/// </summary>
public sealed class FtraceBundler : IKernelEventSink
{
    public const int BundleSize = 1000;

    private readonly PerfettoPacketWriter _writer;
    private readonly ThreadTable _names;
    private readonly Dictionary<int, FtraceEventBundle> _open = new();
    private readonly HashSet<int> _lostReported = [];
    private readonly Func<int, bool>? _cpuLostEvents;

    /// <param name="names">Thread names as the reader learns them (the comm fields of the written events).</param>
    /// <param name="cpuLostEvents">Whether a CPU lost events (its first bundle is flagged lost_events).</param>
    public FtraceBundler(PerfettoPacketWriter writer, ThreadTable names, Func<int, bool>? cpuLostEvents = null)
    {
        _writer = writer;
        _names = names;
        _cpuLostEvents = cpuLostEvents;
    }

    public long Switches { get; private set; }
    public long Wakings { get; private set; }
    public long WakeupNews { get; private set; }
    public long Migrations { get; private set; }
    public long Exits { get; private set; }
    public long Prints { get; private set; }
    public long Skipped { get; private set; }

    public void OnEvent(in KernelEvent e)
    {
        var ev = new FtraceEvent { Timestamp = (ulong)Math.Max(0, e.Timestamp), Pid = (uint)Math.Max(0, e.Pid), CommonFlags = e.Flags };
        switch (e.Kind)
        {
            case KernelEventKind.Switch:
                ev.SchedSwitch = new SchedSwitchFtraceEvent
                {
                    PrevComm = Comm(e.PrevTid, e.Cpu), PrevPid = e.PrevTid, PrevPrio = e.PrevPrio, PrevState = e.PrevState,
                    NextComm = Comm(e.NextTid, e.Cpu), NextPid = e.NextTid, NextPrio = e.NextPrio,
                };
                Switches++;
                break;
            case KernelEventKind.Waking:
                ev.SchedWaking = new SchedWakingFtraceEvent
                {
                    Comm = Comm(e.WokenTid, e.Cpu), Pid = e.WokenTid, Prio = e.WokenPrio,
                    Success = 1, TargetCpu = e.TargetCpu,
                };
                Wakings++;
                break;
            case KernelEventKind.WakeupNew:
                ev.SchedWakeupNew = new SchedWakeupNewFtraceEvent
                {
                    Comm = Comm(e.WokenTid, e.Cpu), Pid = e.WokenTid, Prio = e.WokenPrio,
                    Success = 1, TargetCpu = e.TargetCpu,
                };
                WakeupNews++;
                break;
            case KernelEventKind.Migrate:
                ev.SchedMigrateTask = new SchedMigrateTaskFtraceEvent
                {
                    Comm = Comm(e.MigratingTid, e.Cpu), Pid = e.MigratingTid, Prio = e.MigratingPrio,
                    OrigCpu = e.OrigCpu, DestCpu = e.DestCpu,
                };
                Migrations++;
                break;
            case KernelEventKind.Exit:
                ev.SchedProcessExit = new SchedProcessExitFtraceEvent
                {
                    Comm = Comm(e.ExitingTid, e.Cpu), Pid = e.ExitingTid, Prio = e.ExitingPrio,
                };
                Exits++;
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
        var bundle = Bundle(e.Cpu);
        bundle.Event.Add(ev);
        if (bundle.Event.Count >= BundleSize) Flush(e.Cpu, bundle);
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
