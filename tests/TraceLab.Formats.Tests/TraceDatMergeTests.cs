using TraceLab.Core;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests;

/// <summary>
/// The reader's merge of per-CPU streams and its file windows, against independent models: a per-event linear
/// selection (earliest head, ties to the lowest index, a finished stream's slot taken by the last one) and plain
/// file reads.
/// </summary>
public sealed class TraceDatMergeTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    [Theory]
    [InlineData(2, 1)]
    [InlineData(3, 2)]
    [InlineData(7, 3)]
    [InlineData(16, 4)]
    public void Events_come_in_the_order_of_a_per_event_selection_with_ties_and_uneven_streams(int cpus, int seed)
    {
        var random = new Random(seed);
        var pages = new List<byte[][]>();
        var expected = new List<List<(long Ts, int Tid)>>();
        for (var cpu = 0; cpu < cpus; cpu++)
        {
            var list = new List<(long Ts, int Tid)>();
            var cpuPages = new List<byte[]>();
            // Uneven lengths, so streams finish at different times and the slot order changes.
            var pageCount = random.Next(1, 5);
            var ts = 1000L + random.Next(0, 3);
            for (var p = 0; p < pageCount; p++)
            {
                var page = new PageBuilder((ulong)ts);
                var events = random.Next(5, 55);
                for (var i = 0; i < events; i++)
                {
                    // Small deltas on a shared grid: many equal timestamps across CPUs.
                    var delta = (uint)random.Next(0, 4);
                    if (random.Next(20) == 0)
                    {
                        // A time extend (the cursor's slow path) between records.
                        page.TimeExtend(1);
                        ts += 1;
                    }

                    ts += delta;
                    var tid = (cpu * 100_000) + list.Count + 1;
                    page.Data(delta, TestTraceFile.Switch(tid, 0), forceLengthWord: random.Next(10) == 0);
                    list.Add((ts, tid));
                }

                cpuPages.Add(page.Build());
                ts += random.Next(0, 3);
            }

            pages.Add(cpuPages.ToArray());
            expected.Add(list);
        }

        var path = _files.Write($"merge{cpus}.dat", pages);
        using var reader = TraceDatReader.Open(path);
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);

        var got = sink.Events.Select(e => (e.Timestamp, e.Cpu, e.PrevTid)).ToList();
        Assert.Equal(PerEventSelection(expected), got);
        Assert.Equal(got.Count, reader.Info.EventCount);
    }

    [Fact]
    public void Streams_longer_than_a_window_read_whole_and_in_order()
    {
        // 700 pages per CPU (2.8 MB) cross several 1 MiB windows.
        const int PagesPerCpu = 700;
        var pages = new List<byte[][]>();
        for (var cpu = 0; cpu < 2; cpu++)
        {
            var cpuPages = new byte[PagesPerCpu][];
            for (var p = 0; p < PagesPerCpu; p++)
            {
                var page = new PageBuilder((ulong)((p * 1000) + cpu));
                for (var i = 0; i < 10; i++)
                    page.Data(i == 0 ? 0u : 10u, TestTraceFile.Switch((cpu * 100_000) + (p * 10) + i + 1, 0));
                cpuPages[p] = page.Build();
            }

            pages.Add(cpuPages);
        }

        var (info, events) = TestTraceFile.ReadAll(_files.Write("long.dat", pages));

        Assert.Equal(2 * PagesPerCpu * 10, info.EventCount);
        Assert.Equal(events.OrderBy(e => e.Ts).ThenBy(e => e.Cpu), events);
        Assert.Equal(PagesPerCpu * 10, events.Count(e => e.Cpu == 1));
    }

    [Fact]
    public void Mapped_windows_hold_the_same_bytes_as_positional_reads_and_fail_alike_past_the_end()
    {
        var path = Path.Combine(_files.Directory, "bytes.bin");
        var bytes = new byte[300_000];
        new Random(5).NextBytes(bytes);
        File.WriteAllBytes(path, bytes);
        using var handle = File.OpenHandle(path);
        using var mapped = TraceDatData.Open(handle, path, 2, map: true);
        using var read = TraceDatData.Open(handle, path, 2);
        Assert.True(mapped.IsMapped);
        Assert.False(read.IsMapped);

        TraceDatData.Window? a = null, b = null;
        foreach (var (offset, length) in new[] { (0L, 4096), (4097L, 70_000), (123_457L, 65_536), (299_000L, 1000) })
        {
            a = mapped.Load(a, offset, length, 0, bytes.Length);
            b = read.Load(b, offset, length, 0, bytes.Length);
            Assert.Equal(bytes.AsSpan((int)offset, length).ToArray(), Copy(a, length));
            Assert.Equal(bytes.AsSpan((int)offset, length).ToArray(), Copy(b, length));
        }

        var e1 = Assert.Throws<TraceFormatException>(() => mapped.Load(null, 299_000, 4096, 3, 400_000));
        var e2 = Assert.Throws<TraceFormatException>(() => read.Load(null, 299_000, 4096, 3, 400_000));
        Assert.Equal(e2.Message, e1.Message);
        Assert.Equal(300_000, e1.Offset);
        a?.Dispose();
        b?.Dispose();
    }

    private static unsafe byte[] Copy(TraceDatData.Window w, int length) =>
        new ReadOnlySpan<byte>(w.Pointer, length).ToArray();

    /// <summary>The merge rule stated per event, as the reader applied it before runs: O(streams) per event.</summary>
    private static List<(long Ts, int Cpu, int Tid)> PerEventSelection(List<List<(long Ts, int Tid)>> perCpu)
    {
        var active = Enumerable.Range(0, perCpu.Count).Where(c => perCpu[c].Count > 0).ToList();
        var next = new int[perCpu.Count];
        var result = new List<(long, int, int)>();
        while (active.Count > 0)
        {
            var best = 0;
            for (var i = 1; i < active.Count; i++)
                if (perCpu[active[i]][next[active[i]]].Ts < perCpu[active[best]][next[active[best]]].Ts) best = i;
            var cpu = active[best];
            var (ts, tid) = perCpu[cpu][next[cpu]++];
            result.Add((ts, cpu, tid));
            if (next[cpu] == perCpu[cpu].Count)
            {
                active[best] = active[^1];
                active.RemoveAt(active.Count - 1);
            }
        }

        return result;
    }
}
