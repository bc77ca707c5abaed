using System.Globalization;
using Perfetto.Protos;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Timeline;
using TraceLab.Core;

namespace TraceLab.Export.Perfetto;

/// <summary>A process for the Perfetto process tree and track hierarchy.</summary>
public sealed record ExportProcess(int Pid, string Name, IReadOnlyList<int> Threads);

/// <summary>A workload marker (trace_marker / TraceLogging text) to draw as an instant on its thread.</summary>
public readonly record struct ExportMarker(long Timestamp, int Tid, string Text);

/// <summary>
/// TraceLab's analysis as Perfetto TrackEvents (docs/viewers.md, "Perfetto mapping"): one track per lock object
/// under the process with its convoy episodes as slices; each handoff as a flow arrow from an instant on the giver's
/// thread to a slice on the receiver's thread spanning wakeup → running; futile wakeups and workload markers as
/// instants on their thread. Thread and process names go into a ProcessTree and the kernel release into SystemInfo.
/// </summary>
public sealed class AnalysisTrackWriter
{
    /// <summary>The one trusted sequence all TraceLab TrackEvents are written on.</summary>
    public const uint SequenceId = 1;
    public const string Category = "tracelab";

    private const ulong ThreadTrackBase = 1UL << 32;
    private const ulong ProcessTrackBase = 2UL << 32;
    private const ulong ObjectTrackBase = 3UL << 32;
    private const ulong SliceTrackBase = 4UL << 32;
    private ulong _sliceTracks;

    private readonly PerfettoPacketWriter _writer;
    private readonly TrackEventSequence _sequence;
    private readonly ThreadTable _names;
    private readonly Dictionary<int, int> _processOf = new();
    private readonly ProcessLineage? _lineage;
    private readonly HashSet<ulong> _described = [];
    private readonly Dictionary<LockObject, ulong> _objectTracks = new();
    private readonly int _defaultPid;
    private ulong _nextFlow = 1;

    /// <param name="lineage">
    /// The pass's lineage: a thread outside the exported process is put under the process it answers (the stated
    /// pid first); without one, under the stated pid or its own tid.
    /// </param>
    public AnalysisTrackWriter(PerfettoPacketWriter writer, ThreadTable names, ExportProcess? process,
        ProcessLineage? lineage = null)
    {
        _writer = writer;
        _sequence = new TrackEventSequence(writer, SequenceId);
        _names = names;
        _lineage = lineage;
        Process = process;
        _defaultPid = process?.Pid ?? 0;
        if (process is not null)
        {
            _processOf[process.Pid] = process.Pid;
            foreach (var tid in process.Threads) _processOf[tid] = process.Pid;
        }
    }

    public ExportProcess? Process { get; }
    public long EpisodeSlices { get; private set; }
    public long HandoffFlows { get; private set; }
    public long FutileInstants { get; private set; }
    public long MarkerInstants { get; private set; }
    public long Slices { get; private set; }

    /// <summary>
    /// SystemInfo (kernel release: how trace_processor reads prev_state) and the ProcessTree, stamped at
    /// <paramref name="firstTimestamp"/>.
    /// </summary>
    public void WriteMetadata(string? kernelRelease, int cpus, long firstTimestamp)
    {
        var info = new SystemInfo { NumCpus = (uint)Math.Max(0, cpus) };
        if (kernelRelease is not null) info.Utsname = new Utsname { Sysname = "Linux", Release = kernelRelease };
        _writer.Write(new TracePacket { Timestamp = Ts(firstTimestamp), SystemInfo = info });
        if (Process is null) return;
        var tree = new ProcessTree();
        tree.Processes.Add(
            new ProcessTree.Types.Process { Pid = Process.Pid, Cmdline = { Process.Name }, CmdlineIsComm = true });
        // Kernel tids: the later threads of a reused tid are new threads in the ftrace events (task_newtask,
        // sched_process_free), and the tree lists a tid once.
        foreach (var id in Process.Threads.Prepend(Process.Pid).DistinctBy(ThreadIds.KernelTid))
            tree.Threads.Add(new ProcessTree.Types.Thread
            {
                Tid = ThreadIds.KernelTid(id),
                Tgid = Process.Pid,
                Name = _names.NameOf(id),
            });
        _writer.Write(new TracePacket { Timestamp = Ts(firstTimestamp), ProcessTree = tree });
    }

    public void WriteMarkers(IEnumerable<ExportMarker> markers)
    {
        foreach (var m in markers)
        {
            var ev = Event(TrackEvent.Types.Type.Instant, ThreadTrack(m.Tid), m.Text);
            ev.Categories.Add("marker");
            Emit(m.Timestamp, ev);
            MarkerInstants++;
        }
    }

    /// <summary>Writes the convoy and wakeup findings a <see cref="TimelineAnalyzer"/> recorded.</summary>
    public void WriteAnalysis(TimelineData data)
    {
        foreach (var ep in data.Episodes)
        {
            var track = ObjectTrack(ep.Object);
            var begin = Event(TrackEvent.Types.Type.SliceBegin, track, $"convoy: {ep.Handoffs} handoffs");
            begin.DebugAnnotations.Add(new DebugAnnotation { Name = "handoffs", IntValue = ep.Handoffs });
            begin.DebugAnnotations.Add(
                new DebugAnnotation { Name = "lock object", StringValue = ep.Object.ToString() });
            Emit(ep.Start, begin);
            Emit(Math.Max(ep.Start, ep.End),
                new TrackEvent { Type = TrackEvent.Types.Type.SliceEnd, TrackUuid = track });
            EpisodeSlices++;
        }
        foreach (var h in data.Handoffs)
        {
            var flow = _nextFlow++;
            var give = Event(TrackEvent.Types.Type.Instant, ThreadTrack(h.Giver),
                $"hand off {h.Object} → {_names.NameOf(h.Receiver)} ({ThreadIds.Display(h.Receiver)})");
            give.FlowIds.Add(flow);
            Emit(h.WokenAt, give);
            var receiverTrack = ThreadTrack(h.Receiver);
            var receive = Event(TrackEvent.Types.Type.SliceBegin, receiverTrack,
                $"handoff from {_names.NameOf(h.Giver)} ({ThreadIds.Display(h.Giver)})");
            receive.TerminatingFlowIds.Add(flow);
            receive.DebugAnnotations.Add(
                new DebugAnnotation { Name = "lock object", StringValue = h.Object.ToString() });
            receive.DebugAnnotations.Add(new DebugAnnotation { Name = "queue wait ns", IntValue = h.QueueWaitNs });
            receive.DebugAnnotations.Add(new DebugAnnotation { Name = "gap ns", IntValue = h.GapNs });
            Emit(h.WokenAt, receive);
            Emit(Math.Max(h.WokenAt, h.RunningAt),
                new TrackEvent { Type = TrackEvent.Types.Type.SliceEnd, TrackUuid = receiverTrack });
            HandoffFlows++;
        }
        foreach (var f in data.FutileWakeups)
        {
            var ev = Event(TrackEvent.Types.Type.Instant, ThreadTrack(f.Tid), "futile wakeup");
            ev.DebugAnnotations.Add(new DebugAnnotation { Name = "woken at ns", IntValue = f.WokenAt });
            ev.DebugAnnotations.Add(new DebugAnnotation { Name = "woken for ns", IntValue = f.BlockedAt - f.WokenAt });
            Emit(f.BlockedAt, ev);
            FutileInstants++;
        }
    }

    /// <summary>
    /// Labelled slices (e.g. the findings' worst windows), one track per <see cref="ExportSlice.Track"/>, under the
    /// process's.
    /// </summary>
    public void WriteSlices(IReadOnlyList<ExportSlice> slices)
    {
        foreach (var group in slices.GroupBy(s => s.Track))
        {
            var uuid = SliceTrackBase + _sliceTracks++;
            var d = new TrackDescriptor { Uuid = uuid, Name = group.Key };
            if (Process is { Pid: > 0 } p) d.ParentUuid = ProcessTrack(p.Pid);
            Describe(d);
            // Slices on one track must not overlap: each ends no later than the next one begins.
            var ordered = group.OrderBy(s => s.Start).ThenBy(s => s.End).ToList();
            for (var i = 0; i < ordered.Count; i++)
            {
                var s = ordered[i];
                var end = i + 1 < ordered.Count ? Math.Min(s.End, ordered[i + 1].Start) : s.End;
                Emit(s.Start, Event(TrackEvent.Types.Type.SliceBegin, uuid, s.Name));
                Emit(Math.Max(s.Start, end),
                    new TrackEvent { Type = TrackEvent.Types.Type.SliceEnd, TrackUuid = uuid });
                Slices++;
            }
        }
    }

    private static TrackEvent Event(TrackEvent.Types.Type type, ulong track, string name) =>
        TrackEventSequence.Event(type, track, name, Category);

    private void Emit(long timestamp, TrackEvent ev) => _sequence.Emit(timestamp, ev);

    private static ulong Ts(long t) => (ulong)Math.Max(0, t);

    /// <summary>
    /// The process of a thread id (a later thread of a reused tid has its own id, see <see cref="ThreadIds"/>): the
    /// exported process's, else the lineage's (<see cref="ProcessLineage.ProcessOf(int, ThreadTable)"/>: the stated
    /// pid, else the inferred one), else the stated pid, else its own tid.
    /// </summary>
    private int ProcessOf(int id) =>
        _processOf.TryGetValue(id, out var p) ? p
        : _lineage is not null ? ThreadIds.KernelTid(_lineage.ProcessOf(id, _names))
        : _names.TryGetProcess(id, out var stated) ? stated
        : ThreadIds.KernelTid(id);

    private ulong ProcessTrack(int pid)
    {
        var uuid = ProcessTrackBase + (uint)pid;
        if (_described.Add(uuid))
            Describe(new TrackDescriptor
            {
                Uuid = uuid,
                Process = new ProcessDescriptor
                {
                    Pid = pid,
                    ProcessName = Process?.Pid == pid ? Process.Name : _names.NameOf(pid)
                },
            });
        return uuid;
    }

    private ulong ThreadTrack(int tid)
    {
        var uuid = ThreadTrackBase + (uint)tid;
        if (_described.Add(uuid))
        {
            var pid = ProcessOf(tid);
            var parent = ProcessTrack(pid);
            Describe(new TrackDescriptor
            {
                Uuid = uuid,
                ParentUuid = parent,
                // One track per thread: a later thread of a reused tid gets its own track, with the kernel's tid,
                // which trace_processor binds to the thread alive at each event's time.
                Thread = new ThreadDescriptor
                {
                    Pid = pid,
                    Tid = ThreadIds.KernelTid(tid),
                    ThreadName = _names.NameOf(tid),
                },
            });
        }
        return uuid;
    }

    private ulong ObjectTrack(LockObject obj)
    {
        if (_objectTracks.TryGetValue(obj, out var uuid)) return uuid;
        uuid = ObjectTrackBase + (ulong)_objectTracks.Count;
        _objectTracks[obj] = uuid;
        var d = new TrackDescriptor
        {
            Uuid = uuid,
            Name = string.Create(CultureInfo.InvariantCulture, $"convoys: {obj}"),
            Description = "TraceLab convoy episodes on this lock object (docs/metrics.md#episodes)",
        };
        var pid = obj.Kind == LockObjectKind.Inferred ? (int)obj.Id : _defaultPid;
        if (pid > 0) d.ParentUuid = ProcessTrack(pid);
        Describe(d);
        return uuid;
    }

    private void Describe(TrackDescriptor descriptor) => _sequence.Describe(descriptor);
}
