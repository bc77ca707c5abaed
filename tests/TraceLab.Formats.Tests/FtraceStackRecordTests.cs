using System.Buffers.Binary;
using TraceLab.Core;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests;

/// <summary>
/// ftrace's kernel_stack and user_stack records in a hand-built trace.dat: each gives its frames to the event before
/// it on its CPU (kernel first, then user, interned as one stack of the user stack's process), and is not an event.
/// </summary>
public sealed class FtraceStackRecordTests : IDisposable
{
    // The format files of a 6.18 kernel (events/ftrace/{kernel_stack,user_stack}/format).
    internal const string KernelStackFormat = """
        name: kernel_stack
        ID: 4
        format:
        	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
        	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
        	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
        	field:int common_pid;	offset:4;	size:4;	signed:1;

        	field:int size;	offset:8;	size:4;	signed:1;
        	field:unsigned long caller[8];	offset:16;	size:64;	signed:0;

        print fmt: "\t=> %ps\n", (void *)REC->caller[0]
        """;

    internal const string UserStackFormat = """
        name: user_stack
        ID: 13
        format:
        	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
        	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
        	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
        	field:int common_pid;	offset:4;	size:4;	signed:1;

        	field:unsigned int tgid;	offset:8;	size:4;	signed:0;
        	field:unsigned long caller[8];	offset:16;	size:64;	signed:0;

        print fmt: "\t=> %ps\n", (void *)REC->caller[0]
        """;

    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    [Fact]
    public void Stack_records_give_their_frames_to_the_event_before_them_on_their_cpu()
    {
        var cpu0 = new PageBuilder(1000)
            .Data(0, TestTraceFile.Switch(10, 20))
            .Data(0, KernelStack(10, declared: 3, 0xffffffff81000010, 0xffffffff81000020, 0xffffffff81000030))
            .Data(0, UserStack(10, tgid: 7, 0x401000, 0x402000))
            .Data(5, TestTraceFile.Switch(20, 10))                         // no stack
            .Data(5, TestTraceFile.Switch(10, 0))
            .Data(0, KernelStack(10, declared: 2, 0xffffffff81000040, ulong.MaxValue))  // an old kernel's end mark
            .Data(5, TestTraceFile.Switch(0, 30))
            .Data(0, UserStack(30, tgid: 30, 0x7f0000001234));              // user stack only
        var cpu1 = new PageBuilder(1001)
            .Data(0, UserStack(40, tgid: 40, 0x1))                          // nothing before it: an orphan
            .Data(3, TestTraceFile.Switch(40, 41))
            .Data(0, KernelStack(40, declared: 9, 0xffffffff81000050));    // count past the record's end
        var path = _files.Write("stacks.dat", [[cpu0.Build()], [cpu1.Build()]],
            ("ftrace", KernelStackFormat), ("ftrace", UserStackFormat));

        using var reader = TraceDatReader.Open(path);
        Assert.True(reader.HasStacks);
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);

        Assert.All(sink.Events, e => Assert.Equal(KernelEventKind.Switch, e.Kind));   // no stack record is an event
        Assert.Equal(5, sink.Events.Count);
        Assert.Equal(5, reader.Info.EventCount);
        var byTid = sink.Events.ToDictionary(e => (e.PrevTid, e.NextTid));

        var first = byTid[(10, 20)].StackId;
        Assert.Equal([0xffffffff81000010, 0xffffffff81000020, 0xffffffff81000030, 0x401000, 0x402000],
            reader.Stacks.Frames(first).ToArray());
        Assert.Equal(3, reader.Stacks.KernelFrames(first));
        Assert.Equal(7, reader.Stacks.Process(first));

        Assert.Equal(0, byTid[(20, 10)].StackId);
        Assert.Equal([0xffffffff81000040], reader.Stacks.Frames(byTid[(10, 0)].StackId).ToArray());
        var userOnly = byTid[(0, 30)].StackId;
        Assert.Equal([0x7f0000001234], reader.Stacks.Frames(userOnly).ToArray());
        Assert.Equal(0, reader.Stacks.KernelFrames(userOnly));

        Assert.Equal([0xffffffff81000050], reader.Stacks.Frames(byTid[(40, 41)].StackId).ToArray());
        Assert.Equal(1, reader.Stacks.Truncated);
        Assert.Equal(1, reader.OrphanStackRecords);
    }

    [Fact]
    public void A_trace_whose_first_records_hold_no_stack_is_read_as_it_always_was()
    {
        var page = new PageBuilder(1000).Data(0, TestTraceFile.Switch(10, 20)).Data(1, TestTraceFile.Switch(20, 10));
        var path = _files.Write("plain.dat", [[page.Build()]], ("ftrace", KernelStackFormat),
            ("ftrace", UserStackFormat));

        using var reader = TraceDatReader.Open(path);
        Assert.False(reader.HasStacks);
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);
        Assert.Equal(2, sink.Events.Count);
        Assert.All(sink.Events, e => Assert.Equal(0, e.StackId));
        Assert.Equal(0, reader.Stacks.Count);
    }

    [Fact]
    public void Kernel_frames_are_named_from_the_kallsyms_the_file_holds()
    {
        _files.Kallsyms = "ffffffff81000000 T entry_point\nffffffff81000100 t helper [mod]\n";
        var page = new PageBuilder(1000).Data(0, TestTraceFile.Switch(10, 20));
        var path = _files.Write("kallsyms.dat", [[page.Build()]]);
        using var reader = TraceDatReader.Open(path);
        var symbols = reader.RecordedKernelSymbols();
        Assert.NotNull(symbols);
        Assert.Equal(("entry_point", 0x10ul), symbols.Find(0xffffffff81000010));
        Assert.Equal(("helper", 0x8ul), symbols.Find(0xffffffff81000108));

        _files.Kallsyms = "";
        using var without = TraceDatReader.Open(_files.Write("no-kallsyms.dat", [[page.Build()]]));
        Assert.Null(without.RecordedKernelSymbols());
    }

    /// <summary>A v7 file keeps kallsyms in a (zlib-compressed) section of its own.</summary>
    [ExternalTraceFact("tracecmd/hip24_test_host_kvm_v7zlib.dat")]
    public void Kallsyms_are_read_from_a_compressed_v7_section()
    {
        using var reader = TraceDatReader.Open(ExternalTraces.PathOf("tracecmd/hip24_test_host_kvm_v7zlib.dat"));
        Assert.True(reader.FileVersion == 7 && reader.Compression == "zlib");
        var symbols = reader.RecordedKernelSymbols();
        Assert.NotNull(symbols);
        Assert.True(symbols.Count > 1000, $"{symbols.Count} symbols");
    }

    internal static byte[] KernelStack(int pid, int declared, params ulong[] frames)
    {
        var b = new byte[16 + (8 * frames.Length)];
        Header(b, 4, pid);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(8), declared);
        for (var i = 0; i < frames.Length; i++)
            BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(16 + (8 * i)), frames[i]);
        return b;
    }

    internal static byte[] UserStack(int pid, int tgid, params ulong[] frames)
    {
        var b = new byte[16 + 64];
        Header(b, 13, pid);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(8), tgid);
        for (var i = 0; i < frames.Length; i++)
            BinaryPrimitives.WriteUInt64LittleEndian(b.AsSpan(16 + (8 * i)), frames[i]);
        return b;
    }

    private static void Header(byte[] b, ushort type, int pid)
    {
        BinaryPrimitives.WriteUInt16LittleEndian(b, type);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(4), pid);
    }
}
