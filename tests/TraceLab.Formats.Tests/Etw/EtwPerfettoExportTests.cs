using Google.Protobuf;
using Perfetto.Protos;
using TraceLab.Core;
using TraceLab.Export.Perfetto;
using TraceLab.Formats.Etw;
using static TraceLab.Formats.Tests.Etw.EtwPayloads;

namespace TraceLab.Formats.Tests.Etw;

/// <summary>
/// ETW → Perfetto through the shared event model: hand-built CSwitch / ReadyThread records (a three-thread convoy
/// without syscalls, so the lock object is inferred) mapped by <see cref="EtwKernelEventMapper"/> and exported.
/// The mapper is what the .etl reader feeds; these records skip the file layer.
/// </summary>
public class EtwPerfettoExportTests
{
    private const int Pid = 10, A = 100, B = 200, C = 300, Cpu = 1;
    private const byte User = 1;

    private static IEnumerable<(EtwEventHeader Header, byte[] Payload)> Convoy()
    {
        yield return (ThreadHeader(EtwKernelEvents.ThreadDCStart, 500, Cpu, -1), Thread(8, Pid, A, "worker-a"));
        yield return (ThreadHeader(EtwKernelEvents.ThreadDCStart, 500, Cpu, -1), Thread(8, Pid, B, "worker-b"));
        yield return (ThreadHeader(EtwKernelEvents.ThreadDCStart, 500, Cpu, -1), Thread(8, Pid, C, "worker-c"));
        yield return (Switch(1000), CSwitch(A, 0, 9, 0, 0, 0, KThreadState.Ready));
        yield return (Switch(2000), CSwitch(B, A, 9, 9, (byte)KWaitReason.UserRequest, User, KThreadState.Waiting));
        yield return (Switch(3000), CSwitch(C, B, 9, 9, (byte)KWaitReason.UserRequest, User, KThreadState.Waiting));
        yield return (ThreadHeader(EtwKernelEvents.ReadyThread, 4000, Cpu, C), ReadyThread(A));
        // C → A
        yield return (Switch(5000), CSwitch(A, C, 9, 9, (byte)KWaitReason.UserRequest, User, KThreadState.Waiting));
        yield return (ThreadHeader(EtwKernelEvents.ReadyThread, 6000, Cpu, A), ReadyThread(B));
        // A → B
        yield return (Switch(7000), CSwitch(B, A, 9, 9, (byte)KWaitReason.UserRequest, User, KThreadState.Waiting));
        yield return (ThreadHeader(EtwKernelEvents.ReadyThread, 8000, Cpu, B), ReadyThread(C));
        // B → C
        yield return (Switch(9000), CSwitch(C, B, 9, 9, (byte)KWaitReason.UserRequest, User, KThreadState.Waiting));
        yield return (Switch(10000), CSwitch(0, C, 0, 9, (byte)KWaitReason.WrPreempted, 0, KThreadState.Ready));
    }

    private static EtwEventHeader Switch(long ts) => ThreadHeader(EtwKernelEvents.CSwitch, ts, Cpu, -1);

    /// <summary>The mapper's output as a reader, from hand-built records.</summary>
    private sealed class MappedReader : IKernelTraceReader
    {
        private readonly EtwKernelEventMapper _mapper;

        public MappedReader()
        {
            _mapper = new EtwKernelEventMapper(Threads, new ThreadProcessMap());
        }

        public TraceInfo Info { get; } = new() { Backend = "etw", TraceFile = "convoy.etl", CpuCount = 2 };
        public ThreadTable Threads { get; } = new();

        public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
        {
            var e = new KernelEvent();
            foreach (var (header, payload) in Convoy())
                if (_mapper.Map(header, payload, ref e)) sink.OnEvent(e);
        }

        public void Dispose() { }
    }

    private static (Trace Trace, PerfettoExportSummary Summary) Export()
    {
        using var ms = new MemoryStream();
        var summary = PerfettoExporter.Export(new MappedReader(), ms, pid: Pid);
        return (Trace.Parser.ParseFrom(ms.ToArray()), summary);
    }

    [Fact]
    public void CSwitch_and_ReadyThread_become_sched_switch_and_sched_waking()
    {
        var (trace, _) = Export();
        var ftrace = trace.Packet.Where(p => p.FtraceEvents is not null)
            .SelectMany(p => p.FtraceEvents.Event.Select(e => (p.FtraceEvents.Cpu, e))).ToList();
        var switches = ftrace.Where(x => x.e.SchedSwitch is not null).Select(x => x.e).ToList();
        Assert.Equal(7, switches.Count);
        Assert.All(ftrace, x => Assert.Equal((uint)Cpu, x.Cpu));
        var first = switches[1]; // A waits (user mode) → B
        Assert.Equal(2000UL, first.Timestamp);
        Assert.Equal((A, "worker-a", B, "worker-b"), (first.SchedSwitch.PrevPid, first.SchedSwitch.PrevComm,
            first.SchedSwitch.NextPid, first.SchedSwitch.NextComm));
        Assert.Equal(TaskState.Interruptible, first.SchedSwitch.PrevState); // a user-mode wait reads as S
        Assert.Equal(TaskState.Running, switches[^1].SchedSwitch.PrevState); // preempted (Ready) reads as R
        Assert.Equal("swapper/1", switches[^1].SchedSwitch.NextComm);
        // ReadyThread: the readying thread (event header) is the waker.
        var wakings = ftrace.Where(x => x.e.SchedWaking is not null)
            .Select(x => ((int)x.e.Pid, x.e.SchedWaking.Pid, x.e.Timestamp)).ToList();
        Assert.Equal([(C, A, 4000UL), (A, B, 6000UL), (B, C, 8000UL)], wakings);
    }

    [Fact]
    public void Inferred_convoy_becomes_an_episode_slice_and_three_handoff_flows()
    {
        var (trace, summary) = Export();
        Assert.Equal(1, summary.EpisodeSlices);
        Assert.Equal(3, summary.HandoffFlows);
        var tracks = trace.Packet.Where(p => p.TrackDescriptor is not null)
            .ToDictionary(p => p.TrackDescriptor.Uuid, p => p.TrackDescriptor);
        var events =
            trace.Packet.Where(p => p.TrackEvent is not null).Select(p => (p.Timestamp, p.TrackEvent)).ToList();
        var episode = Assert.Single(events, e => e.TrackEvent.Type == TrackEvent.Types.Type.SliceBegin
            && tracks[e.TrackEvent.TrackUuid].Name.StartsWith("convoys", StringComparison.Ordinal));
        Assert.Equal($"convoys: inferred (process {Pid})", tracks[episode.TrackEvent.TrackUuid].Name);
        Assert.Equal(4000UL, episode.Timestamp); // first receiver woken
        var end = Assert.Single(events, e => e.TrackEvent.Type == TrackEvent.Types.Type.SliceEnd
            && e.TrackEvent.TrackUuid == episode.TrackEvent.TrackUuid);
        Assert.Equal(9000UL, end.Timestamp); // last receiver running

        // Flows: giver's instant → receiver's slice, on the right thread tracks.
        int TidOf(ulong track) => (int)tracks[track].Thread.Tid;
        var flows = events.Where(e => e.TrackEvent.FlowIds.Count > 0)
            .Select(g => (Giver: TidOf(g.TrackEvent.TrackUuid), Receiver: TidOf(events.Single(r =>
                r.TrackEvent.TerminatingFlowIds.Contains(g.TrackEvent.FlowIds[0])).TrackEvent.TrackUuid), g.Timestamp))
            .ToList();
        Assert.Equal([(C, A, 4000UL), (A, B, 6000UL), (B, C, 8000UL)], flows);
        Assert.All(tracks.Values.Where(t => t.Thread is not null), t => Assert.Equal(Pid, t.Thread.Pid));

        var tree = Assert.Single(trace.Packet, p => p.ProcessTree is not null).ProcessTree;
        Assert.Equal([A, B, C], tree.Threads.Where(t => t.Tid != Pid).Select(t => t.Tid).Order());
        Assert.Equal(["worker-a", "worker-b", "worker-c"],
            tree.Threads.Where(t => t.Tid != Pid).OrderBy(t => t.Tid).Select(t => t.Name));
        Assert.Equal(trace.ToByteArray().Length, trace.CalculateSize());
    }
}
