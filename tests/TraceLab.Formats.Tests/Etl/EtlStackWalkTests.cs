using System.Buffers.Binary;
using System.Text;
using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Formats.Etl;
using TraceLab.Formats.Etw;
using static TraceLab.Formats.Tests.Etl.EtlTestWriter;
using static TraceLab.Formats.Tests.Etw.EtwPayloads;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// Stack walks in a layout-built .etl (no public .etl with stacks is known): StackWalk events (opcode 32) after the
/// CSwitch and ReadyThread events they belong to, an Image rundown for the module map, a stack walk of the wrong
/// thread and an orphan; the known answers are the frames, the kernel/user split, whose stack each is and the
/// module that holds the user frames.
/// </summary>
public sealed class EtlStackWalkTests : IDisposable
{
    private const int Pid = 4000, A = 4100, B = 4200;
    private const ushort CSwitchHook = 0x0524, ReadyThreadHook = 0x0532, StackWalkHook = 0x2020,
        ImageDCStartHook = 0x0A03;
    private const ulong ImageBase = 0x7ff6_0000_0000, KernelIp = 0xffff_f800_0000_1000;
    private readonly TempDirectory _dir = new("etl-stacks");

    public void Dispose() => _dir.Dispose();

    internal static byte[] StackWalk(long eventRaw, int pid, int tid, params ulong[] frames)
    {
        var b = new byte[16 + 8 * frames.Length];
        BinaryPrimitives.WriteInt64LittleEndian(b, eventRaw);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(8), pid);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(12), tid);
        for (var i = 0; i < frames.Length; i++)
            BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(16 + 8 * i), frames[i]);
        return b;
    }

    internal static byte[] Image(ulong start, ulong size, int pid, string path)
    {
        var name = Encoding.Unicode.GetBytes(path + "\0");
        var b = new byte[8 + 8 + 4 * 4 + 8 + 16 + name.Length];
        BinaryPrimitives.WriteUInt64LittleEndian(b, start);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(8), size);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(16), pid);
        name.CopyTo(b, b.Length - name.Length);
        return b;
    }

    private sealed class Sink(LockStackAnalyzer locks) : IKernelEventSink
    {
        public List<KernelEvent> Events { get; } = [];

        public void OnEvent(in KernelEvent e)
        {
            Events.Add(e);
            locks.OnEvent(e);
        }
    }

    [Fact]
    public void Stack_walks_attach_to_their_events_and_name_the_module_of_their_user_frames()
    {
        var w = new EtlTestWriter();
        w.Add(0, SystemEvent(8, ImageDCStartHook, 3, 0, Pid, Raw(50),
            Image(ImageBase, 0x10000, Pid, @"C:\app\app.exe")));
        // CPU 0: A blocks (switch to idle; the walk is of A, the outgoing thread: not attached), B readies A on
        // CPU 1 (walk of B), A switches in on CPU 0 (walk of A: where it had blocked), an orphan walk.
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(1_000), CSwitch(0, A, 0, 10, 6, 1, KThreadState.Waiting)));
        w.Add(0, SystemEvent(8, StackWalkHook, 2, A, Pid, Raw(1_000), StackWalk(Raw(1_000), Pid, A, KernelIp)));
        w.Add(1, Compact(8, ReadyThreadHook, 2, B, Pid, Raw(5_000), ReadyThread(A)));
        w.Add(1, SystemEvent(8, StackWalkHook, 2, B, Pid, Raw(5_000),
            StackWalk(Raw(5_000), Pid, B, KernelIp + 8, ImageBase + 0x2345)));
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(9_000), CSwitch(A, 0, 10, 0, 0, 0, KThreadState.Ready)));
        w.Add(0, SystemEvent(8, StackWalkHook, 2, A, Pid, Raw(9_000),
            StackWalk(Raw(9_000), Pid, A, KernelIp, ImageBase + 0x1234, ImageBase + 0x1800)));
        w.Add(0, SystemEvent(8, StackWalkHook, 2, A, Pid, Raw(9_500), StackWalk(Raw(7_777), Pid, A, KernelIp)));
        var path = _dir.File("stacks.etl");
        File.WriteAllBytes(path, w.Build());

        using var reader = EtlFileReader.Open(path);
        Assert.True(reader.HasStacks);
        Assert.True(reader.SwitchStacksAreOfNextThread);
        var locks = new LockStackAnalyzer(_ => Pid, reader.SwitchStacksAreOfNextThread);
        var sink = new Sink(locks);
        reader.Read(sink);

        // Stack walks are not events; the orphan is counted.
        Assert.DoesNotContain(sink.Events, e => e.Timestamp == 9_500);
        Assert.Equal(1, reader.OrphanStackWalks);
        var switches = sink.Events.Where(e => e.Kind == KernelEventKind.Switch).ToList();
        Assert.Equal(0, switches[0].StackId); // the outgoing thread's walk
        var wake = sink.Events.Single(e => e.Kind == KernelEventKind.Waking);
        var resume = switches[1];
        Assert.Equal([KernelIp + 8, ImageBase + 0x2345], reader.Stacks.Frames(wake.StackId).ToArray());
        Assert.Equal([KernelIp, ImageBase + 0x1234, ImageBase + 0x1800],
            reader.Stacks.Frames(resume.StackId).ToArray());
        Assert.Equal(1, reader.Stacks.KernelFrames(resume.StackId));
        Assert.Equal(Pid, reader.Stacks.Process(resume.StackId));
        Assert.Equal(@"C:\app\app.exe", reader.Maps.Find(Pid, ImageBase + 0x1234, 9_000)?.Path);
        // A's off-CPU time (1,000 → 9,000 ns) is charged to the stack it resumed with (ETW's New Thread Stack).
        var off = Assert.Single(locks.OffCpu);
        Assert.Equal((Pid, resume.StackId), off.Key);
        Assert.Equal(8_000, off.Value.Nanoseconds);
    }

    [Fact]
    public void A_trace_without_stack_walks_has_no_stacks()
    {
        var w = new EtlTestWriter();
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(1_000), CSwitch(A, 0, 10, 0, 0, 0, KThreadState.Ready)));
        var path = _dir.File("plain.etl");
        File.WriteAllBytes(path, w.Build());
        using var reader = EtlFileReader.Open(path);
        Assert.False(reader.HasStacks);
    }
}
