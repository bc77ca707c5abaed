using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// Hand-built perf.data files with known answers: decoding, time order across rounds, names, loss, damage.
/// </summary>
public sealed class PerfDataReaderTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    private string Write(PerfDataBuilder b, string name = "x.perf.data")
    {
        var path = Path.Combine(_files.Directory, name);
        File.WriteAllBytes(path, b.Build());
        return path;
    }

    private static (PerfDataReader Reader, List<KernelEvent> Events) ReadAll(string path, bool salvage = false)
    {
        var reader = PerfDataReader.Open(path, new TraceReadOptions { Salvage = salvage });
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);
        return (reader, sink.Events);
    }

    [Fact]
    public void Samples_decode_into_the_event_model()
    {
        var path = Write(new PerfDataBuilder()
            .Sample(1000, 1, TestTraceFile.Switch(501, 502))
            .FinishedRound());
        var (reader, events) = ReadAll(path);
        using var _ = reader;

        var e = Assert.Single(events);
        Assert.Equal(KernelEventKind.Switch, e.Kind);
        Assert.Equal((1000L, 1, 501, 502), (e.Timestamp, e.Cpu, e.PrevTid, e.NextTid));
        Assert.Equal("perf", reader.Info.Backend);
        Assert.Equal(2, reader.Info.CpuCount);
        Assert.Equal(1, reader.Info.EventCount);
        Assert.Equal("t502", reader.Threads.NameOf(502));
        Assert.Equal("saved-name", reader.Threads.NameOf(500));
    }

    /// <summary>
    /// A perf.data that did not record ftrace's print event holds no markers: the reader says so (the timeline relies
    /// on it) and a print payload in a sample of another event (a forged file) is not turned into one.
    /// </summary>
    [Fact]
    public void A_file_without_the_print_event_has_no_markers()
    {
        var print = KernelEventDecoderTests.Payload(
            TestData.Format("ftrace", "print"), 7, w => w.Tail("TRACELAB_REGION_BEGIN"));
        var path = Write(new PerfDataBuilder()
            .Sample(1000, 0, TestTraceFile.Switch(501, 502))
            .Sample(2000, 0, print, pid: 7, tid: 7)
            .FinishedRound());
        var (reader, events) = ReadAll(path);
        using var _ = reader;

        Assert.False(reader.Info.MayHaveMarkers);
        Assert.Equal([KernelEventKind.Switch, KernelEventKind.Other], events.Select(e => e.Kind));
    }

    /// <summary>
    /// perf writes each CPU's buffer in turn, so a round holds events out of order; at a FINISHED_ROUND only events up
    /// to the newest time of the previous round are final. Equal timestamps keep file order.
    /// </summary>
    [Fact]
    public void Events_come_out_in_time_order_across_rounds_with_ties_in_file_order()
    {
        var path = Write(new PerfDataBuilder()
            .Sample(10, 0, TestTraceFile.Switch(1, 2))
            .Sample(40, 0, TestTraceFile.Switch(2, 3))
            .Sample(20, 1, TestTraceFile.Switch(4, 5))
            .FinishedRound()
            // Older than round 1's newest (40) but newer than nothing flushed yet: must still be placed before 40.
            .Sample(30, 1, TestTraceFile.Switch(5, 6))
            .Sample(40, 1, TestTraceFile.Switch(6, 7))
            .Sample(50, 0, TestTraceFile.Switch(3, 8))
            .FinishedRound()
            .Sample(45, 1, TestTraceFile.Switch(7, 9))
            .FinishedRound());
        var (reader, events) = ReadAll(path);
        reader.Dispose();

        Assert.Equal([10L, 20, 30, 40, 40, 45, 50], events.Select(e => e.Timestamp));
        Assert.Equal([2, 5, 6, 3, 7, 9, 8], events.Select(e => e.NextTid));
        Assert.Equal(0, reader.LateEvents);
    }

    [Fact]
    public void Comm_records_name_threads_and_other_records_are_stepped_over()
    {
        var path = Write(new PerfDataBuilder()
            .Comm(600, 601, "worker-name", 5, 0)
            .Other(10, 64)
            .Sample(10, 0, TestTraceFile.Switch(601, 0))
            .FinishedRound());
        var (reader, events) = ReadAll(path);
        reader.Dispose();

        Assert.Single(events);
        // The switch's own prev_comm (t601) is the later word on the name.
        Assert.Equal("t601", reader.Threads.NameOf(601));
    }

    [Fact]
    public void Comm_record_names_a_thread_that_has_no_event_with_a_comm()
    {
        var path =
            Write(new PerfDataBuilder().Comm(700, 702, "only-comm", 5, 1).Sample(10, 0, TestTraceFile.Switch(1, 2)));
        var (reader, _) = ReadAll(path);
        reader.Dispose();
        Assert.Equal("only-comm", reader.Threads.NameOf(702));
    }

    [Fact]
    public void Lost_records_count_per_cpu()
    {
        var path = Write(new PerfDataBuilder()
            .Sample(10, 0, TestTraceFile.Switch(1, 2))
            .Lost(7, 11, 1)
            .Lost(5, 12, 1)
            .Lost(3, 13, 0)
            .FinishedRound());
        var (reader, _) = ReadAll(path);
        reader.Dispose();
        Assert.Equal([3L, 12], reader.Info.LostEventsPerCpu!);
    }

    [Fact]
    public void A_truncated_file_fails_with_file_and_offset_even_when_salvaging()
    {
        var b = new PerfDataBuilder();
        for (var i = 0; i < 100; i++) b.Sample(i * 10, i % 2, TestTraceFile.Switch(i, i + 1));
        var full = b.Build();
        var path = Path.Combine(_files.Directory, "cut.perf.data");
        // Cut in the middle of the data section: the feature sections (after the data) are gone too.
        File.WriteAllBytes(path, full[..(full.Length / 2)]);

        var error = Assert.Throws<TraceFormatException>(() => PerfDataReader.Open(path).Dispose());
        Assert.StartsWith(path + ": at offset ", error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', error.Message);
        // perf writes the tracepoint formats after the data: without them there is nothing to decode.
        error = Assert.Throws<TraceFormatException>(
            () => PerfDataReader.Open(path, new TraceReadOptions { Salvage = true }).Dispose());
        Assert.Contains("truncated", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Pipe_format_is_refused_with_what_to_do()
    {
        var path = Path.Combine(_files.Directory, "pipe.perf.data");
        var bytes = new byte[16];
        "PERFILE2"u8.CopyTo(bytes);
        bytes[8] = 16;
        File.WriteAllBytes(path, bytes);
        var error = Assert.Throws<TraceFormatException>(() => PerfDataReader.Open(path).Dispose());
        Assert.Contains("pipe format", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_damaged_record_is_salvaged_up_to_the_damage()
    {
        var b = new PerfDataBuilder();
        for (var i = 0; i < 100; i++) b.Sample(i * 10, i % 2, TestTraceFile.Switch(i, i + 1));
        b.FinishedRound();
        var bytes = b.Build();
        // Record 50's header size field: 0 is impossible (a record is at least its 8-byte header).
        var dataOffset = (int)BitConverter.ToUInt64(bytes, 40);
        var recordSize = BitConverter.ToUInt16(bytes, dataOffset + 6);
        bytes[dataOffset + 50 * recordSize + 6] = 0;
        bytes[dataOffset + 50 * recordSize + 7] = 0;
        var path = Path.Combine(_files.Directory, "bad.perf.data");
        File.WriteAllBytes(path, bytes);

        using (var strict = PerfDataReader.Open(path))
        {
            var error = Assert.Throws<TraceFormatException>(() => strict.Read(new TraceDatRoundTripTests.ListSink()));
            Assert.Contains($"at offset {dataOffset + 50 * recordSize}", error.Message, StringComparison.Ordinal);
        }

        var (reader, events) = ReadAll(path, salvage: true);
        reader.Dispose();
        Assert.Equal(50, events.Count);
        Assert.Contains("skipped from offset", reader.Info.Damage, StringComparison.Ordinal);
    }
}
