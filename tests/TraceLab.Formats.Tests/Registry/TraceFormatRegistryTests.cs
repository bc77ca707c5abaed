using System.IO.Compression;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.Registry;

/// <summary>Formats are recognised by content, never by file name, and an unknown file names every format.</summary>
public sealed class TraceFormatRegistryTests : IDisposable
{
    private const string RawEtl = "etw/etlparser_ShutdownPerfDiagLogger.etl";
    private static readonly string TraceDat = Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat");
    private static readonly string PerfData =
        Path.Combine(RepoPaths.SampleTraces, "perf-timemutex-mutex", "capture.perf.data");
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-formats-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void A_trace_dat_named_like_an_etl_file_is_read_as_a_trace_dat()
    {
        var renamed = Path.Combine(_dir, "capture.etl");
        File.Copy(TraceDat, renamed);
        Assert.Equal("trace.dat", TraceFormats.All.Detect(renamed).Name);
        using var reader = TraceFormats.All.Open(renamed);
        Assert.IsType<TraceDatReader>(reader);
    }

    [Fact]
    public void A_perf_data_without_its_name_is_read_as_a_perf_data()
    {
        var renamed = Path.Combine(_dir, "trace.dat");
        File.Copy(PerfData, renamed);
        using var reader = TraceFormats.All.Open(renamed);
        Assert.IsType<PerfDataReader>(reader);
    }

    [Fact]
    public void Salvage_reaches_the_reader()
    {
        var truncated = Path.Combine(_dir, "cut.dat");
        var bytes = File.ReadAllBytes(TraceDat);
        File.WriteAllBytes(truncated, bytes[..(bytes.Length * 2 / 3)]);
        Assert.Throws<TraceFormatException>(() => TraceFormats.All.Open(truncated));
        using var salvaged = TraceFormats.All.Open(truncated, new TraceReadOptions { Salvage = true });
        salvaged.Read(new NullSink());
        Assert.False(string.IsNullOrEmpty(salvaged.Info.Damage));
    }

    [Fact]
    public void An_unknown_file_names_the_file_and_every_registered_format()
    {
        var text = Path.Combine(_dir, "notes.etl");
        File.WriteAllText(text, "this is not a trace");
        var ex = Assert.Throws<TraceFormatException>(() => TraceFormats.All.Open(text));
        Assert.StartsWith($"{text}: at offset 0: not a trace TraceLab reads: expected ", ex.Message);
        foreach (var format in TraceFormats.All.Formats)
            Assert.Contains($"{format.Name} ({format.Signature})", ex.Message);
    }

    [Fact]
    public void An_empty_file_is_not_a_trace()
    {
        var empty = Path.Combine(_dir, "empty");
        File.WriteAllBytes(empty, []);
        Assert.Throws<TraceFormatException>(() => TraceFormats.All.Detect(empty));
    }

    [Fact]
    public void The_first_matching_format_wins()
    {
        var registry = new TraceFormatRegistry([new FakeFormat("a", 0x41), new FakeFormat("b", 0x41)]);
        Assert.Equal("a", registry.Detect("A"u8)!.Name);
        Assert.Null(registry.Detect("C"u8));

        var extended = new TraceFormatRegistry([.. registry.Formats, new FakeFormat("c", 0x43)]);
        Assert.Equal(["a", "b", "c"], extended.Names);
        Assert.Equal("c", extended.Detect("C"u8)!.Name);
        Assert.Equal("expected a (first byte 41), b (first byte 41) or c (first byte 43)", extended.Expected());
    }

    [ExternalTraceFact(RawEtl)]
    public void A_kernel_written_etl_is_recognised_by_its_header_buffer() =>
        Assert.True(EtlSignature.Matches(Head(File.ReadAllBytes(ExternalTraces.PathOf(RawEtl)))));

    [ExternalTraceTheory("etw/perfview_net452_x64.etl.zip", "etw/etwanalyzer_TraceLoggingTester.etl.zip")]
    [InlineData("etw/perfview_net452_x64.etl.zip")]
    [InlineData("etw/etwanalyzer_TraceLoggingTester.etl.zip")]
    public void A_relogged_etl_is_recognised_by_its_header_buffer(string zip)
    {
        using var archive = ZipFile.OpenRead(ExternalTraces.PathOf(zip));
        var entry = archive.Entries.Single(e => e.Name.EndsWith(".etl", StringComparison.OrdinalIgnoreCase));
        using var stream = entry.Open();
        var head = new byte[TraceFormatRegistry.HeadLength];
        var n = stream.ReadAtLeast(head, head.Length, throwOnEndOfStream: false);
        Assert.True(EtlSignature.Matches(head.AsSpan(0, n)));
    }

    [Fact]
    public void Trace_dat_and_perf_data_are_not_taken_for_etl()
    {
        Assert.False(EtlSignature.Matches(Head(File.ReadAllBytes(TraceDat))));
        Assert.False(EtlSignature.Matches(Head(File.ReadAllBytes(PerfData))));
        Assert.False(EtlSignature.Matches(new byte[TraceFormatRegistry.HeadLength]));
    }

    [ExternalTraceFact(RawEtl)]
    public void Sniffing_damaged_heads_never_throws_and_truncated_signatures_never_match()
    {
        var heads = new[] { TraceDat, PerfData, ExternalTraces.PathOf(RawEtl) }
            .Select(p => Head(File.ReadAllBytes(p))).ToList();
        var registry = new TraceFormatRegistry([.. TraceFormats.All.Formats, new EtlOnly()]);
        var random = new Random(18);
        int cases = 0, stillMatched = 0, notMatched = 0;
        foreach (var head in heads)
        {
            // Every truncation: a signature cut short must not match its format.
            var full = registry.Detect(head)!;
            for (var n = 0; n < 8; n++, cases++) Assert.NotSame(full, registry.Detect(head.AsSpan(0, n)));
            for (var n = 8; n <= head.Length; n++, cases++) registry.Detect(head.AsSpan(0, n));
            // Random damage: up to 8 bytes overwritten anywhere in the head.
            for (var i = 0; i < 5000; i++, cases++)
            {
                var damaged = (byte[])head.Clone();
                for (var k = random.Next(1, 9); k > 0; k--)
                    damaged[random.Next(damaged.Length)] = (byte)random.Next(256);
                if (registry.Detect(damaged.AsSpan(0, random.Next(damaged.Length + 1))) == full) stillMatched++;
                else notMatched++;
            }
        }

        // Both answers were reached: most damage misses the signature (the format is still recognised) and some cuts
        // or overwrites it (recognised as another format, or none); a detector that threw would have failed above.
        Assert.True(cases > 15_000);
        Assert.True(stillMatched >= 1000, $"{stillMatched} damaged heads still recognised");
        Assert.True(notMatched >= 1, $"{notMatched} damaged heads not recognised");
    }

    private static byte[] Head(byte[] file) => file[..Math.Min(file.Length, TraceFormatRegistry.HeadLength)];

    private sealed class FakeFormat(string name, byte first) : ITraceFormat
    {
        public string Name => name;
        public string Signature => $"first byte {first:X2}";
        public bool Matches(ReadOnlySpan<byte> head) => head.Length > 0 && head[0] == first;
        public IKernelTraceReader Open(string path, TraceReadOptions options) => throw new NotSupportedException();
    }

    private sealed class NullSink : IKernelEventSink
    {
        public void OnEvent(in KernelEvent e) { }
    }

    private sealed class EtlOnly : ITraceFormat
    {
        public string Name => "etl";
        public string Signature => EtlSignature.Description;
        public bool Matches(ReadOnlySpan<byte> head) => EtlSignature.Matches(head);
        public IKernelTraceReader Open(string path, TraceReadOptions options) => throw new NotSupportedException();
    }
}
