using Perfetto.Protos;
using TraceLab.Export.Perfetto;
using TraceLab.Formats.Etl;
using TraceLab.Formats.Etw;
using static TraceLab.Formats.Tests.Etl.EtlStackWalkTests;
using static TraceLab.Formats.Tests.Etl.EtlTestWriter;
using static TraceLab.Formats.Tests.Etw.EtwPayloads;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// The Perfetto export of a trace with stacks: the layout-built .etl of <see cref="EtlStackWalkTests"/> (A blocks at
/// 1,000 ns, B readies it at 5,000 with its own stack walk, A switches in at 9,000 with the walk of where it had
/// blocked: ETW's New Thread Stack). The known answers: one off-CPU slice 1,000 → 9,000 on A's track carrying A's
/// stack, outermost frame first, woken by B; one instant at 5,000 on B's track carrying B's stack.
/// </summary>
public sealed class EtlPerfettoStacksTests : IDisposable
{
    private readonly TempDirectory _dir = new("etl-perfetto-stacks");

    public void Dispose() => _dir.Dispose();

    [Fact]
    public void Off_cpu_slices_and_wakings_carry_their_interned_stacks()
    {
        var path = _dir.File("stacks.etl");
        File.WriteAllBytes(path, EtlStackWalkTests.BlockReadyResume());

        using var reader = EtlFileReader.Open(path);
        using var output = new MemoryStream();
        var summary = PerfettoExporter.Export(reader, output);
        var trace = Trace.Parser.ParseFrom(output.ToArray());

        Assert.Equal(1, summary.OffCpuSlices);
        Assert.Equal(1, summary.WakerInstants);
        Assert.Equal(2, summary.Callstacks);
        var packets = trace.Packet.Where(p => p.TrustedPacketSequenceId == OffCpuStackWriter.SequenceId).ToList();
        Assert.True(packets[0].FirstPacketOnSequence);
        var interned = packets.Where(p => p.InternedData is not null).Select(p => p.InternedData).ToList();
        var names = interned.SelectMany(i => i.FunctionNames).ToDictionary(s => s.Iid, s => s.Str.ToStringUtf8());
        var frames = interned.SelectMany(i => i.Frames).ToDictionary(f => f.Iid);
        var stacks = interned.SelectMany(i => i.Callstacks).ToDictionary(c => c.Iid);
        var mappings = interned.SelectMany(i => i.Mappings).ToDictionary(m => m.Iid);
        var paths = interned.SelectMany(i => i.MappingPaths).ToDictionary(s => s.Iid, s => s.Str.ToStringUtf8());
        List<(string Name, ulong RelPc, Frame.Types.Kind Kind)> Frames(ulong callstack) =>
            stacks[callstack].FrameIds.Select(id => frames[id])
                .Select(f => (names[f.FunctionNameId], f.RelPc, f.Kind)).ToList();

        var tracks = trace.Packet.Where(p => p.TrackDescriptor is not null).ToDictionary(p => p.TrackDescriptor.Uuid,
            p => p.TrackDescriptor);
        var events = packets.Where(p => p.TrackEvent is not null).ToList();
        var begin = Assert.Single(events, p => p.TrackEvent.Type == TrackEvent.Types.Type.SliceBegin);
        var end = Assert.Single(events, p => p.TrackEvent.Type == TrackEvent.Types.Type.SliceEnd);
        Assert.Equal((1_000ul, 9_000ul), (begin.Timestamp, end.Timestamp));
        Assert.Equal(A, tracks[begin.TrackEvent.TrackUuid].Thread.Tid);
        Assert.Equal("off CPU (stacks)", tracks[begin.TrackEvent.TrackUuid].Name);
        // Outermost first; no symbols for a Windows image: module+offset, the mapping named by its path.
        Assert.Equal([("app.exe+0x1800", 0x1800ul, Frame.Types.Kind.Native),
                ("app.exe+0x1234", 0x1234ul, Frame.Types.Kind.Native)],
            Frames(begin.TrackEvent.CallstackIid).Take(2));
        Assert.Equal(Frame.Types.Kind.Kernel, Frames(begin.TrackEvent.CallstackIid)[2].Kind);
        Assert.Equal(@"C:\app\app.exe",
            paths[mappings[frames[stacks[begin.TrackEvent.CallstackIid].FrameIds[0]].MappingId].PathStringIds[0]]);
        Assert.Equal("off CPU at app.exe+0x1234 ← app.exe+0x1800", begin.TrackEvent.Name);
        Assert.Contains($"({B})", begin.TrackEvent.DebugAnnotations.Single(a => a.Name == "woken by").StringValue,
            StringComparison.Ordinal);

        var wake = Assert.Single(events, p => p.TrackEvent.Type == TrackEvent.Types.Type.Instant
            && p.TrackEvent.Categories.Contains(OffCpuStackWriter.Category));
        Assert.Equal(5_000ul, wake.Timestamp);
        Assert.Equal(B, tracks[wake.TrackEvent.TrackUuid].Thread.Tid);
        Assert.Equal([("app.exe+0x2345", 0x2345ul, Frame.Types.Kind.Native)],
            Frames(wake.TrackEvent.CallstackIid).Take(1));
        // Each interned entry is defined once, in the packet that first uses it.
        Assert.Equal(stacks.Count, interned.Sum(i => i.Callstacks.Count));
        Assert.Equal(names.Count, interned.Sum(i => i.FunctionNames.Count));
    }

    [Fact]
    public void A_trace_without_stacks_writes_no_stack_sequence()
    {
        var w = new EtlTestWriter();
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(1_000), CSwitch(0, A, 0, 10, 6, 1, KThreadState.Waiting)));
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(9_000), CSwitch(A, 0, 10, 0, 0, 0, KThreadState.Ready)));
        var path = _dir.File("plain.etl");
        File.WriteAllBytes(path, w.Build());

        using var reader = EtlFileReader.Open(path);
        using var output = new MemoryStream();
        var summary = PerfettoExporter.Export(reader, output);
        Assert.Equal(0, summary.OffCpuSlices);
        Assert.DoesNotContain(Trace.Parser.ParseFrom(output.ToArray()).Packet,
            p => p.TrustedPacketSequenceId == OffCpuStackWriter.SequenceId);
    }
}
