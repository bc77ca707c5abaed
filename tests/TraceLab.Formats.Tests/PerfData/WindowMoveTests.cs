using TraceLab.Core;
using TraceLab.Formats.PerfData;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// The merge reads held events where the scan left them, in the <see cref="PerfRecordStream"/>'s window, after the
/// window has moved on (its kept part now lies elsewhere, and the rest is new): through the smallest window, a file
/// of small rounds moves the window dozens of times while every round's runs are held in it, and window ends fall
/// inside records of every kind. The events must be exactly those read through the default window, which holds the
/// whole file.
/// </summary>
public sealed class WindowMoveTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Held_events_read_through_a_moving_window_are_the_ones_read_through_one_window(bool compress)
    {
        var b = SmallRounds(new PerfDataBuilder { Cpus = 2, Compress = compress }, out var count);
        var path = Path.Combine(_files.Directory, $"{Guid.NewGuid():N}.perf.data");
        File.WriteAllBytes(path, b.Build());

        var (whole, _) = Read(path, PerfRecordStream.DefaultWindowBytes, 0);
        var (moving, detached) = Read(path, PerfRecordStream.MinWindowBytes, 0);
        // The default: the events decoded as the scan reads them, the window moving on without them.
        var (decoded, _) = Read(path, PerfRecordStream.MinWindowBytes, DecodedEvents.DefaultCapacity);
        // The window read on a few KB at a time (steps ending inside records), moving on when its buffer is full.
        var (stepped, steppedDetached) = Read(path, PerfRecordStream.MinWindowBytes, 0, fillStepBytes: 4099);

        Assert.True(new FileInfo(path).Length > (compress ? 2 : 16) * PerfRecordStream.MinWindowBytes,
            "the records must span many windows");
        Assert.Equal(count, whole.Count);
        Assert.Equal(0, detached);
        Assert.Equal(whole.Select(e => e.ToString()), moving.Select(e => e.ToString()));
        Assert.Equal(whole, moving);
        Assert.Equal(whole, decoded);
        Assert.Equal(0, steppedDetached);
        Assert.Equal(whole, stepped);
    }

    /// <summary>
    /// The scan starts on the first step read, not on a whole window: a window read whole at the start (16 MiB of new
    /// memory) held the first event back ~100 ms on a VM whose free memory went back to its host.
    /// </summary>
    [Fact]
    public void The_first_event_comes_after_one_step_of_the_window_is_read()
    {
        var b = SmallRounds(new PerfDataBuilder { Cpus = 2 }, out var count);
        var path = Path.Combine(_files.Directory, $"{Guid.NewGuid():N}.perf.data");
        File.WriteAllBytes(path, b.Build());
        const int step = 16 * 1024;

        using var reader = PerfDataReader.Open(path);
        reader.FillStepBytes = step;
        long readAtFirst = -1;
        var sink = new FirstEventSink(() => readAtFirst = reader.WindowBytesRead);
        reader.Read(sink);

        Assert.True(new FileInfo(path).Length > 8 * step, "the records must span many steps");
        Assert.Equal(count, sink.Count);
        // The first round (~40 KB) is delivered when the second round's end is read: a few steps, not the window.
        Assert.InRange(readAtFirst, 1, 8 * step);
        // Every byte of the data section read once: the steps read on after the window, never again.
        Assert.Equal(DataSectionSize(path), reader.WindowBytesRead);
    }

    /// <summary>perf_file_header's data.size (magic, size, attr_size, attrs and data.offset before it).</summary>
    private static long DataSectionSize(string path)
    {
        var header = new byte[56];
        using var stream = File.OpenRead(path);
        stream.ReadExactly(header);
        return BitConverter.ToInt64(header, 48);
    }

    private sealed class FirstEventSink(Action first) : IKernelEventSink
    {
        public int Count { get; private set; }

        public void OnEvent(in KernelEvent e)
        {
            if (Count++ == 0) first();
        }
    }

    /// <summary>
    /// Rounds of ~40 KB (two CPUs' chunks of 40 samples of 200-700 bytes, each sample followed by a non-event record
    /// of another size): the previous round and this one fit in the half window kept behind the scan.
    /// </summary>
    private static PerfDataBuilder SmallRounds(PerfDataBuilder b, out int count)
    {
        const int rounds = 240, perChunk = 40;
        count = 0;
        for (var round = 0; round < rounds; round++)
        {
            for (var cpu = 0; cpu < b.Cpus; cpu++)
            {
                for (var i = 0; i < perChunk; i++)
                {
                    var id = ++count;
                    var payload = TestTraceFile.Switch(id, id + 1_000_000);
                    var raw = new byte[payload.Length + (id * 37) % 500];
                    payload.CopyTo(raw, 0);
                    b.Sample(100_000L * round + 2L * i + cpu, cpu, raw);
                    b.Other(10, 16 + 8 * ((id * 13) % 40));
                }
            }

            b.FinishedRound();
        }

        return b;
    }

    /// <param name="decodedCapacity">0: every held event is read again from the window at delivery (what this test is
    /// about); otherwise decoded at the scan.</param>
    private static (List<KernelEvent> Events, long Detached) Read(string path, int windowBytes, int decodedCapacity,
        int fillStepBytes = PerfRecordStream.DefaultFillStepBytes)
    {
        using var reader = PerfDataReader.Open(path);
        reader.WindowBytes = windowBytes;
        reader.FillStepBytes = fillStepBytes;
        reader.DecodedCapacity = decodedCapacity;
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);
        return (sink.Events, reader.DetachedRuns);
    }
}
