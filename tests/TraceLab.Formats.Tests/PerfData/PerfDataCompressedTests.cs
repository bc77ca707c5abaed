using System.Buffers.Binary;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// perf record -z files (COMPRESSED records: one zstd stream cut into records, records cut across them) built by
/// <see cref="PerfDataBuilder"/> with known answers: the same events as the uncompressed file of the same records;
/// damage reported at the COMPRESSED record, salvaged up to it; decompression bombs refused. And the real -z file
/// among the external traces, checked against the record counts perf 6.1 gives for it.
/// </summary>
public sealed class PerfDataCompressedTests : IDisposable
{
    private const string External = "perf/perfparser_parallel_static_gcc.zstd.perf.data";
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    private string Write(byte[] bytes, string name = "x.perf.data")
    {
        var path = Path.Combine(_files.Directory, name);
        File.WriteAllBytes(path, bytes);
        return path;
    }

    private static (PerfDataReader Reader, List<KernelEvent> Events) ReadAll(string path, bool salvage = false)
    {
        var reader = PerfDataReader.Open(path, new TraceReadOptions { Salvage = salvage });
        var sink = new TraceDatRoundTripTests.ListSink();
        try
        {
            reader.Read(sink);
        }
        catch
        {
            reader.Dispose();
            throw;
        }

        return (reader, sink.Events);
    }

    /// <summary>
    /// Two CPUs' buffers written in turn per round (out of order within a round), names and loss on the way.
    /// </summary>
    private static PerfDataBuilder Records(PerfDataBuilder b, int count = 3000)
    {
        for (var i = 0; i < count; i++)
        {
            if (i % 100 == 0) b.Comm(10, 10 + i % 7, $"name{i}", i * 100, i % 2);
            if (i % 777 == 0) b.Lost(3, i * 100, i % 2);
            b.Sample(i * 100 + (i % 2) * 37, i % 2, TestTraceFile.Switch(10 + i % 7, 10 + (i + 1) % 7));
            if (i % 64 == 63) b.FinishedRound();
        }

        return b.FinishedRound();
    }

    [Fact]
    public void A_compressed_file_gives_the_events_of_the_same_records_uncompressed()
    {
        var plain = Write(Records(new PerfDataBuilder()).Build(), "plain.perf.data");
        // 997-byte flushes cut sample records across COMPRESSED records; FINISHED_ROUND lies between them.
        var zBytes = Records(new PerfDataBuilder { Compress = true }).Build();
        var z = Write(zBytes, "z.perf.data");
        var (pr, expected) = ReadAll(plain);
        var (zr, actual) = ReadAll(z);
        using var _ = pr;
        using var __ = zr;

        Assert.True(zBytes.Length < new FileInfo(plain).Length / 2, "the records were compressed");
        Assert.Equal(3000, expected.Count);
        Assert.Equal(expected.Select(e => e.ToString()), actual.Select(e => e.ToString()));
        Assert.Equal(pr.Info.LostEventsPerCpu!, zr.Info.LostEventsPerCpu!);
        Assert.Equal(pr.Threads.Names.OrderBy(n => n.Key), zr.Threads.Names.OrderBy(n => n.Key));
        var compressed = zr.RecordCount(PerfRecordType.Compressed);
        Assert.True(compressed > 47, $"{compressed} COMPRESSED records");
        Assert.Equal(3000, zr.RecordCount(PerfRecordType.Sample));
        Assert.Equal(pr.RecordCount(PerfRecordType.FinishedRound), zr.RecordCount(PerfRecordType.FinishedRound));
        Assert.Equal(0, zr.LateEvents);
    }

    [Fact]
    public void Large_flushes_split_into_several_compressed_records_read_as_one_stream()
    {
        // One flush of all records: incompressible payloads make its output span several 64 KiB records.
        var b = new PerfDataBuilder { Compress = true, CompressChunk = 1 << 22, MmapLength = 1 << 24 };
        var rng = new Random(7);
        for (var i = 0; i < 4000; i++)
        {
            var raw = TestTraceFile.Switch(1 + i % 5, 1 + (i + 1) % 5);
            var noisy = raw.Concat(Enumerable.Range(0, 64).Select(_ => (byte)rng.Next(256))).ToArray();
            b.Sample(i * 10, i % 2, noisy);
        }

        var (reader, events) = ReadAll(Write(b.FinishedRound().Build()));
        using var _ = reader;
        Assert.Equal(4000, events.Count);
        var compressed = reader.RecordCount(PerfRecordType.Compressed);
        Assert.True(compressed >= 4, $"{compressed} COMPRESSED records");
        Assert.Equal(Enumerable.Range(0, 4000).Select(i => i * 10L), events.Select(e => e.Timestamp));
    }

    /// <summary>Offset of the n-th record of <paramref name="type"/> in the data section of a built file.</summary>
    private static int RecordAt(byte[] file, uint type, int n)
    {
        var at = (int)BinaryPrimitives.ReadUInt64LittleEndian(file.AsSpan(40));
        var end = at + (int)BinaryPrimitives.ReadUInt64LittleEndian(file.AsSpan(48));
        while (at < end)
        {
            if (BinaryPrimitives.ReadUInt32LittleEndian(file.AsSpan(at)) == type && n-- == 0) return at;
            at += BinaryPrimitives.ReadUInt16LittleEndian(file.AsSpan(at + 6));
        }

        throw new InvalidOperationException("no such record");
    }

    [Fact]
    public void Garbage_zstd_is_reported_at_its_compressed_record_and_salvaged_up_to_it()
    {
        var bytes = Records(new PerfDataBuilder { Compress = true }).Build();
        var bad = RecordAt(bytes, PerfRecordType.Compressed, 20);
        // Each flush starts a zstd block at the record's data: a block header of type 3 (reserved) is corrupt. (perf
        // records no zstd checksum, so damage inside a block decodes to wrong records, caught as record damage.)
        for (var i = 8; i < 11; i++) bytes[bad + i] = 0xFF;
        var path = Write(bytes);

        using (var strict = PerfDataReader.Open(path))
        {
            var error = Assert.Throws<TraceFormatException>(() => strict.Read(new TraceDatRoundTripTests.ListSink()));
            var expected = $"{path}: at offset {bad}: zstd data";
            Assert.True(error.Message.StartsWith(expected, StringComparison.Ordinal), error.Message);
            Assert.DoesNotContain('\n', error.Message);
        }

        var (reader, events) = ReadAll(path, salvage: true);
        using var _ = reader;
        Assert.InRange(events.Count, 100, 2999);
        Assert.Contains($"skipped from offset {bad}", reader.Info.Damage, StringComparison.Ordinal);
        // In time order up to the damage.
        Assert.Equal(events.Select(e => e.Timestamp).Order(), events.Select(e => e.Timestamp));
    }

    [Fact]
    public void Compressed_data_ending_inside_a_record_reads_up_to_it_with_a_warning()
    {
        var bytes = Records(new PerfDataBuilder { Compress = true }).Build();
        // The compressed stream stops after the 30th COMPRESSED record (the later ones turned into ID_INDEX records,
        // which carry nothing TraceLab reads): its last decompressed record is cut short, as perf record itself
        // sometimes leaves its stream; perf ignores such a tail, and so does the reader, with a warning.
        while (true)
        {
            int at;
            try { at = RecordAt(bytes, PerfRecordType.Compressed, 30); }
            catch (InvalidOperationException) { break; }
            bytes[at] = 69;
        }

        var (reader, events) = ReadAll(Write(bytes));
        using var _ = reader;
        Assert.InRange(events.Count, 100, 2999);
        Assert.Equal(30, reader.RecordCount(PerfRecordType.Compressed));
        Assert.Contains("ends inside a record", reader.Info.Damage, StringComparison.Ordinal);
        Assert.Equal(events.Select(e => e.Timestamp).Order(), events.Select(e => e.Timestamp));
    }

    [Fact]
    public void A_record_inflating_beyond_mmap_len_is_refused_as_a_bomb()
    {
        // 2 MB of zero-filled samples in one flush compress to a few KB; mmap_len says one record inflates to 64 KiB at
        // most.
        var b = new PerfDataBuilder { Compress = true, CompressChunk = 1 << 22, MmapLength = 64 * 1024 };
        var zeros = TestTraceFile.Switch(1, 2).Concat(new byte[400]).ToArray();
        for (var i = 0; i < 5000; i++) b.Sample(i, 0, zeros);
        var path = Write(b.Build());

        using var reader = PerfDataReader.Open(path);
        var error = Assert.Throws<TraceFormatException>(() => reader.Read(new TraceDatRoundTripTests.ListSink()));
        Assert.Contains("inflating to at most 65,536 bytes", error.Message, StringComparison.Ordinal);
        Assert.True(reader.PeakInflateBuffer <= 8 << 20, $"buffer grew to {reader.PeakInflateBuffer:N0} bytes");
    }

    [Fact]
    public void Compressed_records_without_header_compressed_are_refused()
    {
        var bytes = Records(new PerfDataBuilder { Compress = true }, 200).Build();
        // Clear the HEADER_COMPRESSED feature bit (27): perf itself has no decompression buffer size then.
        bytes[72 + 3] &= unchecked((byte)~(1 << 3));
        var path = Write(bytes);
        using var reader = PerfDataReader.Open(path);
        var error = Assert.Throws<TraceFormatException>(() => reader.Read(new TraceDatRoundTripTests.ListSink()));
        Assert.Contains("HEADER_COMPRESSED", error.Message, StringComparison.Ordinal);
    }

    [ExternalTraceFact(External)]
    public void The_external_zstd_perf_data_reads_with_perfs_record_counts()
    {
        var (reader, events) = ReadAll(ExternalTraces.PathOf(External));
        using var _ = reader;
        // Reference counts (published with the external traces: perf 6.1 report --stats).
        Assert.Equal(7, reader.RecordCount(PerfRecordType.Compressed));
        Assert.Equal(242, reader.RecordCount(PerfRecordType.Sample));
        Assert.Equal(42, reader.RecordCount(PerfRecordType.Switch));
        Assert.Equal(24, reader.RecordCount(PerfRecordType.Fork));
        Assert.Equal(25, reader.RecordCount(PerfRecordType.Exit));
        Assert.Equal(140, reader.RecordCount(1));
        Assert.Equal(62, reader.RecordCount(10));
        // sched:sched_switch was recorded: its 9 samples are the switches (the SWITCH records are not counted again),
        // FORK / EXIT records are the forks and exits (no sched_process_* tracepoint).
        Assert.False(reader.SwitchesFromRecords);
        Assert.Equal(9, events.Count(e => e.Kind == KernelEventKind.Switch));
        Assert.Equal(24, events.Count(e => e.Kind == KernelEventKind.Fork));
        Assert.Equal(25, events.Count(e => e.Kind == KernelEventKind.Exit));
        Assert.Equal(58, events.Count);
        Assert.Equal(events.Select(e => e.Timestamp).Order(), events.Select(e => e.Timestamp));
        // perf script: PERF_RECORD_FORK(56089:56091):(56089:56089) — the main thread starts the workers.
        Assert.Contains(events, e => e.Kind == KernelEventKind.Fork && e.ParentTid == 56089 && e.ChildTid == 56091);
        Assert.Equal("parallel_static", reader.Threads.NameOf(56089));
        Assert.Equal(24, reader.Info.CpuCount);
    }
}
