using TraceLab.Core;
using TraceLab.Formats.PerfData;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// perf.data callchains and module maps, on files laid out as perf record -g writes them: each sample's
/// PERF_SAMPLE_CALLCHAIN becomes the event's stack (context markers taken out, kernel frames first), equal stacks
/// share one id, MMAP2 records (with and without build-id), exec and fork give each process its maps over time.
/// </summary>
public sealed class PerfStacksTests : IDisposable
{
    private const ulong Kernel = unchecked((ulong)-128);
    private const ulong User = unchecked((ulong)-512);
    private const ulong Guest = unchecked((ulong)-2048);
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-perfstacks-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private PerfDataReader Open(PerfDataBuilder b)
    {
        var path = Path.Combine(_dir, $"{Guid.NewGuid():N}.perf.data");
        File.WriteAllBytes(path, b.Build());
        return PerfDataReader.Open(path);
    }

    private sealed class Collect : IKernelEventSink
    {
        public List<KernelEvent> Events { get; } = [];
        public void OnEvent(in KernelEvent e) => Events.Add(e);
    }

    [Fact]
    public void Callchains_become_interned_stacks_with_kernel_frames_first()
    {
        var b = new PerfDataBuilder { Callchains = true };
        ulong[] chain = [Kernel, 0xffffffff81000010, 0xffffffff81000020, User, 0x401000, 0x402000];
        b.Sample(100, 0, TestTraceFile.Switch(10, 11), pid: 10, tid: 10, callchain: chain);
        b.Sample(200, 1, TestTraceFile.Switch(11, 10), pid: 10, tid: 11, callchain: chain);
        b.Sample(300, 0, TestTraceFile.Switch(10, 11), pid: 10, tid: 10, callchain: [User, 0x401000, Guest, 0x999]);
        b.Sample(400, 1, TestTraceFile.Switch(11, 10), pid: 10, tid: 11, callchain: []);
        using var reader = Open(b);
        var sink = new Collect();
        reader.Read(sink);

        Assert.True(reader.HasStacks);
        var ids = sink.Events.Select(e => e.StackId).ToArray();
        Assert.Equal([1, 1, 2, 0], ids);
        Assert.Equal(2, reader.Stacks.Count);
        Assert.Equal(new ulong[] { 0xffffffff81000010, 0xffffffff81000020, 0x401000, 0x402000 },
            reader.Stacks.Frames(1).ToArray());
        Assert.Equal(2, reader.Stacks.KernelFrames(1));
        Assert.Equal(10, reader.Stacks.Process(1));
        Assert.Equal(new ulong[] { 0x401000 }, reader.Stacks.Frames(2).ToArray());
        Assert.Equal(0, reader.Stacks.KernelFrames(2));
        Assert.Equal(1, reader.OtherContextFrames);
    }

    [Fact]
    public void A_count_past_the_record_keeps_the_frames_that_are_there()
    {
        var b = new PerfDataBuilder { Callchains = true };
        b.Sample(100, 0, TestTraceFile.Switch(10, 11), pid: 10, tid: 10, callchain: [User, 0x401000],
            callchainCount: 1_000_000);
        using var reader = Open(b);
        var sink = new Collect();
        try
        {
            reader.Read(sink);
        }
        catch (TraceFormatException)
        {
            // The damaged count also hides the raw payload: refusing the sample is as good as keeping its frames.
            return;
        }

        Assert.Equal(1, reader.Stacks.Truncated);
    }

    [Fact]
    public void Mmap2_exec_and_fork_give_each_process_its_maps_over_time()
    {
        byte[] id = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20];
        var b = new PerfDataBuilder { Callchains = true };
        b.Mmap2(10, 0x400000, 0x1000, 0x1000, "/bin/app", 0, 0, buildId: id);
        b.Mmap2(10, 0x600000, 0x2000, 0, "/bin/app", 0, 0, executable: false);
        b.Sample(100, 0, TestTraceFile.Switch(10, 11), pid: 10, tid: 10, callchain: [User, 0x400010]);
        b.Task(PerfRecordType.Fork, 150, 0, 20, 10, pid: 20);
        b.Exec(10, "other", 200, 0);
        b.Mmap2(10, 0x400000, 0x1000, 0, "/bin/other", 210, 0);
        b.Sample(300, 0, TestTraceFile.Switch(10, 11), pid: 10, tid: 10, callchain: [User, 0x400010]);
        using var reader = Open(b);
        reader.Read(new Collect());

        var maps = reader.Maps;
        Assert.Equal("/bin/app", maps.Find(10, 0x400010, 100)!.Path);
        Assert.Equal(id, maps.Find(10, 0x400010, 100)!.BuildId);
        Assert.False(maps.Find(10, 0x600100, 100)!.Executable);
        Assert.Equal("/bin/other", maps.Find(10, 0x400010, 300)!.Path);
        // The forked child keeps the parent's program after the parent's exec.
        Assert.Equal("/bin/app", maps.Find(20, 0x400010, 300)!.Path);
        Assert.Null(maps.Find(10, 0x900000, 300));
        Assert.Equal(2, reader.Stacks.Count);
    }

    [Fact]
    public void A_file_without_callchains_has_no_stacks_and_events_without_ids()
    {
        var b = new PerfDataBuilder();
        b.Sample(100, 0, TestTraceFile.Switch(10, 11), pid: 10, tid: 10);
        using var reader = Open(b);
        var sink = new Collect();
        reader.Read(sink);
        Assert.False(reader.HasStacks);
        Assert.All(sink.Events, e => Assert.Equal(0, e.StackId));
    }

    [Fact]
    public void Damaged_callchains_and_mappings_fail_cleanly_or_salvage()
    {
        var b = new PerfDataBuilder { Callchains = true };
        for (var i = 0; i < 800; i++)
        {
            if (i % 100 == 0) b.Mmap2(10, 0x400000 + (ulong)i * 0x1000, 0x1000, 0, $"/bin/m{i}", i * 100, i % 2,
                buildId: i % 200 == 0 ? [1, 2, 3, 4] : null);
            if (i % 150 == 0) b.Task(PerfRecordType.Fork, i * 100, i % 2, 20 + i, 10, pid: 20 + i);
            ulong[] chain = [Kernel, 0xffffffff81000000 + (ulong)(i % 5), User, 0x400000 + (ulong)(i % 13), 0x401000];
            b.Sample(i * 100 + (i % 2) * 37, i % 2, TestTraceFile.Switch(10 + i % 7, 10 + (i + 1) % 7), pid: 10,
                tid: 10 + i % 7, callchain: chain);
            if (i % 50 == 49) b.FinishedRound();
        }

        PerfDataFuzzTests.FuzzFile(b.FinishedRound().Build(), 400, 20261128, _dir, analyzeStacks: true);
    }
}
