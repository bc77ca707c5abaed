using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;
using Xunit;

namespace TraceLab.Formats.Tests;

/// <summary>
/// The many-threads generator (`tracelab bench --generate-threads`) writes a trace.dat the reader takes as it
/// would a capture: every thread once, with its fork, wakeups, switches and exit at the times the generator chose.
/// </summary>
public sealed class ManyThreadsTraceDatTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-manythreads-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private static ManyThreadsTraceDat.Formats Formats() => new(TestData.Resource("header_page"),
        TestData.Resource("header_event"), TestData.Resource("ftrace_print.format"),
        ManyThreadsTraceDat.Formats.EventNames.Select(n => TestData.Format("sched", n)).ToList());

    [Fact]
    public void EveryThreadAppearsOnceWithItsWholeLife()
    {
        const int threads = 1001, processes = 4;
        var path = Path.Combine(_dir, "many.dat");
        var written = ManyThreadsTraceDat.Write(path, Formats(), threads, processes);

        var (info, events) = Read(path);
        Assert.Equal(threads * ManyThreadsTraceDat.EventsPerThread, written);
        Assert.Equal(written, info.EventCount);
        Assert.Equal(written, events.Count);
        Assert.Equal(2, info.CpuCount);
        Assert.Equal(0, info.LostEvents);
        // Thread tids follow the leaders' and each is forked, woken new, switched in twice and exits once.
        var tids = Enumerable.Range(ManyThreadsTraceDat.FirstTid + processes, threads).ToHashSet();
        Assert.Equal(tids, events.Where(e => e.Kind == KernelEventKind.Fork).Select(e => e.ChildTid).ToHashSet());
        Assert.Equal(tids, events.Where(e => e.Kind == KernelEventKind.Exit).Select(e => e.ExitingTid).ToHashSet());
        Assert.All(events.Where(e => e.Kind == KernelEventKind.Fork),
            e => Assert.InRange(e.ParentTid, ManyThreadsTraceDat.FirstTid,
                ManyThreadsTraceDat.FirstTid + processes - 1));
        var switchIns = events.Where(e => e.Kind == KernelEventKind.Switch && tids.Contains(e.NextTid))
            .GroupBy(e => e.NextTid).ToList();
        Assert.Equal(threads, switchIns.Count);
        Assert.All(switchIns, g => Assert.Equal(2, g.Count()));
        // Per CPU the time order is the generator's: the reader merged the two CPUs without reordering either.
        foreach (var cpu in events.GroupBy(e => e.Cpu))
            Assert.True(cpu.Select(e => e.Timestamp).SequenceEqual(cpu.Select(e => e.Timestamp).Order()));
        // The last thread (odd index 1000 runs on CPU 0, the 501st there) exits 32 µs into its 40-µs slot.
        var lastTid = ManyThreadsTraceDat.FirstTid + processes + 1000;
        var last = events.Single(e => e.Kind == KernelEventKind.Exit && e.ExitingTid == lastTid);
        Assert.Equal(1_000_000_000 + 500 * 40_000 + 32_000, last.Timestamp);
    }

    [Fact]
    public void RefusesToReplaceAnExistingFile()
    {
        var path = Path.Combine(_dir, "x.dat");
        File.WriteAllText(path + ".cpu0.raw", "user data");
        Assert.Throws<IOException>(() => ManyThreadsTraceDat.Write(path, Formats(), 10, 2));
        Assert.Equal("user data", File.ReadAllText(path + ".cpu0.raw"));
    }

    private static (TraceInfo Info, List<KernelEvent> Events) Read(string path)
    {
        using var reader = TraceDatReader.Open(path, new TraceReadOptions());
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);
        return (reader.Info, sink.Events);
    }
}
