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
    internal const int Pid = 4000, A = 4100, B = 4200;
    internal const ushort CSwitchHook = 0x0524, ReadyThreadHook = 0x0532, StackWalkHook = 0x2020,
        ImageDCStartHook = 0x0A03;
    internal const ulong ImageBase = 0x7ff6_0000_0000, KernelIp = 0xffff_f800_0000_1000;
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

    /// <summary>
    /// CPU 0: A blocks at 1,000 ns (the walk at its switch-out is of A, the outgoing thread: not attached); B readies A
    /// on CPU 1 at 5,000 (walk of B); A switches in on CPU 0 at 9,000 (walk of A: where it had blocked); an orphan
    /// walk at 9,500. An Image rundown maps app.exe at <see cref="ImageBase"/>.
    /// </summary>
    internal static byte[] BlockReadyResume()
    {
        var w = new EtlTestWriter();
        w.Add(0, SystemEvent(8, ImageDCStartHook, 3, 0, Pid, Raw(50),
            Image(ImageBase, 0x10000, Pid, @"C:\app\app.exe")));
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(1_000), CSwitch(0, A, 0, 10, 6, 1, KThreadState.Waiting)));
        w.Add(0, SystemEvent(8, StackWalkHook, 2, A, Pid, Raw(1_000), StackWalk(Raw(1_000), Pid, A, KernelIp)));
        w.Add(1, Compact(8, ReadyThreadHook, 2, B, Pid, Raw(5_000), ReadyThread(A)));
        w.Add(1, SystemEvent(8, StackWalkHook, 2, B, Pid, Raw(5_000),
            StackWalk(Raw(5_000), Pid, B, KernelIp + 8, ImageBase + 0x2345)));
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(9_000), CSwitch(A, 0, 10, 0, 0, 0, KThreadState.Ready)));
        w.Add(0, SystemEvent(8, StackWalkHook, 2, A, Pid, Raw(9_000),
            StackWalk(Raw(9_000), Pid, A, KernelIp, ImageBase + 0x1234, ImageBase + 0x1800)));
        w.Add(0, SystemEvent(8, StackWalkHook, 2, A, Pid, Raw(9_500), StackWalk(Raw(7_777), Pid, A, KernelIp)));
        return w.Build();
    }

    [Fact]
    public void Stack_walks_attach_to_their_events_and_name_the_module_of_their_user_frames()
    {
        var path = _dir.File("stacks.etl");
        File.WriteAllBytes(path, BlockReadyResume());

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

    private const ushort KeyDeleteHook = 0x2023, KeyRundownHook = 0x2024, KeyKernelHook = 0x2025,
        KeyUserHook = 0x2026;

    /// <summary>A StackKeyKernel / StackKeyUser payload: the event's raw time, process, thread and the key.</summary>
    internal static byte[] KeyReference(long eventRaw, int pid, int tid, ulong key)
    {
        var b = new byte[24];
        BinaryPrimitives.WriteInt64LittleEndian(b, eventRaw);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(8), pid);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(12), tid);
        BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(16), key);
        return b;
    }

    /// <summary>A KeyDelete / KeyRundown payload: the key and its frames.</summary>
    internal static byte[] KeyDefinition(ulong key, params ulong[] frames)
    {
        var b = new byte[8 + 8 * frames.Length];
        BinaryPrimitives.WriteUInt64LittleEndian(b, key);
        for (var i = 0; i < frames.Length; i++)
            BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(8 + 8 * i), frames[i]);
        return b;
    }

    /// <summary>
    /// A trace recorded with stack caching (WPR, xperf -stackcompression): events reference the cached kernel and user
    /// parts of their stacks by key, and the keys' frames come when a key leaves the cache (KeyDelete) or at the
    /// session's end (KeyRundown), on another CPU. A key deleted and used again names other frames; a walked kernel
    /// part joins a cached user part; a key never defined and a reference of no event are counted.
    /// </summary>
    [Fact]
    public void Stack_key_references_get_the_frames_their_keys_are_defined_with_later()
    {
        const ulong KernelKey = 0xffff_c000_0000_0100, UserKey = 0xffff_c000_0000_0200,
            OtherUser = 0xffff_c000_0000_0300, Undefined = 0xffff_c000_0000_0400;
        var w = new EtlTestWriter();
        w.Add(0, SystemEvent(8, ImageDCStartHook, 3, 0, Pid, Raw(50),
            Image(ImageBase, 0x10000, Pid, @"C:pppp.exe")));
        // A switches in twice with the same cached parts (one stack), B readies A with another user part.
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(1_000), CSwitch(A, 0, 10, 0, 0, 0, KThreadState.Ready)));
        w.Add(0, SystemEvent(8, KeyKernelHook, 2, A, Pid, Raw(1_000), KeyReference(Raw(1_000), Pid, A, KernelKey)));
        w.Add(0, SystemEvent(8, KeyUserHook, 2, A, Pid, Raw(1_000), KeyReference(Raw(1_000), Pid, A, UserKey)));
        w.Add(1, Compact(8, ReadyThreadHook, 2, B, Pid, Raw(2_000), ReadyThread(A)));
        w.Add(1, SystemEvent(8, KeyKernelHook, 2, B, Pid, Raw(2_000), KeyReference(Raw(2_000), Pid, B, KernelKey)));
        w.Add(1, SystemEvent(8, KeyUserHook, 2, B, Pid, Raw(2_000), KeyReference(Raw(2_000), Pid, B, OtherUser)));
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(3_000), CSwitch(A, 0, 10, 0, 0, 0, KThreadState.Ready)));
        w.Add(0, SystemEvent(8, KeyKernelHook, 2, A, Pid, Raw(3_000), KeyReference(Raw(3_000), Pid, A, KernelKey)));
        w.Add(0, SystemEvent(8, KeyUserHook, 2, A, Pid, Raw(3_000), KeyReference(Raw(3_000), Pid, A, UserKey)));
        // The user key leaves the cache (its frames), and is used again for other frames.
        w.Add(1, SystemEvent(8, KeyDeleteHook, 2, 0, 0, Raw(4_000),
            KeyDefinition(UserKey, ImageBase + 0x1234, ImageBase + 0x1800)));
        // A walked kernel part with a cached user part, the reused key.
        w.Add(0, PerfInfo(8, CSwitchHook, 2, Raw(5_000), CSwitch(A, 0, 10, 0, 0, 0, KThreadState.Ready)));
        w.Add(0, SystemEvent(8, StackWalkHook, 2, A, Pid, Raw(5_000), StackWalk(Raw(5_000), Pid, A, KernelIp + 0x40)));
        w.Add(0, SystemEvent(8, KeyUserHook, 2, A, Pid, Raw(5_000), KeyReference(Raw(5_000), Pid, A, UserKey)));
        // A key never defined, and a reference of no event.
        w.Add(1, Compact(8, ReadyThreadHook, 2, B, Pid, Raw(6_000), ReadyThread(A)));
        w.Add(1, SystemEvent(8, KeyUserHook, 2, B, Pid, Raw(6_000), KeyReference(Raw(6_000), Pid, B, Undefined)));
        w.Add(1, SystemEvent(8, KeyUserHook, 2, B, Pid, Raw(6_500), KeyReference(Raw(1), Pid, B, UserKey)));
        // The session's end: the keys still cached.
        w.Add(1, SystemEvent(8, KeyRundownHook, 2, 0, 0, Raw(9_000), KeyDefinition(KernelKey, KernelIp, KernelIp + 8)));
        w.Add(1, SystemEvent(8, KeyRundownHook, 2, 0, 0, Raw(9_001), KeyDefinition(OtherUser, ImageBase + 0x2345)));
        w.Add(1, SystemEvent(8, KeyRundownHook, 2, 0, 0, Raw(9_002), KeyDefinition(UserKey, ImageBase + 0x3000)));
        var path = _dir.File("stack-keys.etl");
        File.WriteAllBytes(path, w.Build());

        using var reader = EtlFileReader.Open(path);
        Assert.True(reader.HasStacks);
        var sink = new Sink(new LockStackAnalyzer(_ => Pid, reader.SwitchStacksAreOfNextThread));
        reader.Read(sink);

        // Stack records are not events.
        Assert.Equal(5, sink.Events.Count(e => e.Kind is KernelEventKind.Switch or KernelEventKind.Waking));
        var switches = sink.Events.Where(e => e.Kind == KernelEventKind.Switch).ToList();
        var wakes = sink.Events.Where(e => e.Kind == KernelEventKind.Waking).ToList();
        ulong[] Frames(in KernelEvent e) => reader.Stacks.Frames(e.StackId).ToArray();
        // One stack for the two switches with the same parts: the kernel key's frames, then the user key's first ones.
        Assert.Equal(switches[0].StackId, switches[1].StackId);
        Assert.Equal([KernelIp, KernelIp + 8, ImageBase + 0x1234, ImageBase + 0x1800], Frames(switches[0]));
        Assert.Equal(2, reader.Stacks.KernelFrames(switches[0].StackId));
        Assert.Equal(Pid, reader.Stacks.Process(switches[0].StackId));
        Assert.Equal([KernelIp, KernelIp + 8, ImageBase + 0x2345], Frames(wakes[0]));
        // The walked kernel part, then the reused key's second frames (its rundown).
        Assert.Equal([KernelIp + 0x40, ImageBase + 0x3000], Frames(switches[2]));
        Assert.Equal(1, reader.Stacks.KernelFrames(switches[2].StackId));
        // The undefined key's part is missing and counted; the reference of no event is an orphan.
        Assert.Empty(Frames(wakes[1]));
        Assert.Equal(1, reader.UndefinedStackKeys);
        Assert.Equal(1, reader.OrphanStackWalks);
        // Every event with a stack counted once (the walked kernel part's event too).
        Assert.Equal(5, reader.Stacks.Interned);
        // Both said in the report's stack notes.
        Assert.Equal(2, reader.StackNotes.Count);
        Assert.StartsWith("1 stack walks or stack-key references followed no event", reader.StackNotes[0],
            StringComparison.Ordinal);
        Assert.StartsWith("1 stacks reference a cached stack key the trace never defines", reader.StackNotes[1],
            StringComparison.Ordinal);
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
