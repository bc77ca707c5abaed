using Perfetto.Protos;
using TraceLab.Export.Perfetto;
using TraceLab.Formats.Etl;
using TraceLab.Formats.Etw;
using static TraceLab.Formats.Tests.Etl.EtlTestWriter;
using static TraceLab.Formats.Tests.Etw.EtwPayloads;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// What `tracelab export x.etl --to perfetto` does off Windows: a three-thread convoy written as a compressed .etl
/// file, read by <see cref="EtlFileReader"/>, exported. Known answers: one inferred convoy episode, three hand-offs.
/// </summary>
public sealed class EtlPerfettoExportTests
{
    private const int Pid = 10, A = 100, B = 200, C = 300, Cpu = 1;
    private const ushort CSwitchHook = 0x0524, ReadyThreadHook = 0x0532, ThreadDCStartHook = 0x0503;
    private const byte User = 1;

    private static byte[] Convoy()
    {
        var w = new EtlTestWriter { BufferSize = 512, Compress = _ => true };
        void Switch(long ns, int next, int prev, KWaitReason reason, byte mode, KThreadState state) =>
            w.Add(Cpu, PerfInfo(8, CSwitchHook, 2, Raw(ns), CSwitch(next, prev, 9, 9, (byte)reason, mode, state)));
        void Ready(long ns, int waker, int woken) => w.Add(Cpu, Compact(8, ReadyThreadHook, 2, waker, Pid,
            Raw(ns), ReadyThread(woken)));

        foreach (var (tid, name) in new[] { (A, "worker-a"), (B, "worker-b"), (C, "worker-c") })
            w.Add(Cpu, SystemEvent(8, ThreadDCStartHook, 3, 0, 0, Raw(500), Thread(8, Pid, tid, name)));
        Switch(1000, A, 0, KWaitReason.Executive, 0, KThreadState.Ready);
        Switch(2000, B, A, KWaitReason.UserRequest, User, KThreadState.Waiting);
        Switch(3000, C, B, KWaitReason.UserRequest, User, KThreadState.Waiting);
        Ready(4000, C, A);
        Switch(5000, A, C, KWaitReason.UserRequest, User, KThreadState.Waiting);
        Ready(6000, A, B);
        Switch(7000, B, A, KWaitReason.UserRequest, User, KThreadState.Waiting);
        Ready(8000, B, C);
        Switch(9000, C, B, KWaitReason.UserRequest, User, KThreadState.Waiting);
        Switch(10000, 0, C, KWaitReason.WrPreempted, 0, KThreadState.Ready);
        return w.Build();
    }

    [Fact]
    public void A_convoy_read_from_an_etl_file_exports_its_episode_and_handoffs()
    {
        using var dir = new TempDirectory("etl-perfetto");
        var path = dir.File("convoy.etl");
        File.WriteAllBytes(path, Convoy());
        using var reader = EtlFileReader.Open(path);
        using var ms = new MemoryStream();

        var summary = PerfettoExporter.Export(reader, ms, pid: Pid);

        Assert.Equal(1, summary.EpisodeSlices);
        Assert.Equal(3, summary.HandoffFlows);
        var trace = Trace.Parser.ParseFrom(ms.ToArray());
        var ftrace = trace.Packet.Where(p => p.FtraceEvents is not null).SelectMany(p => p.FtraceEvents.Event).ToList();
        Assert.Equal(7, ftrace.Count(e => e.SchedSwitch is not null));
        var wakings = ftrace.Where(e => e.SchedWaking is not null).Select(e => ((int)e.Pid, e.SchedWaking.Pid,
            e.Timestamp)).ToList();
        Assert.Equal([(C, A, 4000UL), (A, B, 6000UL), (B, C, 8000UL)], wakings);
        var tree = Assert.Single(trace.Packet, p => p.ProcessTree is not null).ProcessTree;
        Assert.Equal(["worker-a", "worker-b", "worker-c"],
            tree.Threads.Where(t => t.Tid != Pid).OrderBy(t => t.Tid).Select(t => t.Name));
    }
}
