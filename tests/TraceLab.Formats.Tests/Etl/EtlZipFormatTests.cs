using System.IO.Compression;
using TraceLab.Core;
using TraceLab.Formats.Etl;
using TraceLab.Formats.Registry;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// PerfView's .etl.zip read as it is: the same events as the .etl inside, the copy it reads from deleted, and a zip
/// that is not such an archive refused in one line.
/// </summary>
public sealed class EtlZipFormatTests
{
    private static int Count(IKernelTraceReader reader)
    {
        var sink = new CountingSink();
        reader.Read(sink);
        return sink.Count;
    }

    private sealed class CountingSink : IKernelEventSink
    {
        public int Count;
        public void OnEvent(in KernelEvent e) => Count++;
    }

    /// <summary>This process's copies (other test assemblies, run at the same time, make their own).</summary>
    private static string[] CopiesLeft() =>
        Directory.GetDirectories(Path.GetTempPath(), $"tracelab-etlzip-{Environment.ProcessId}-*");

    /// <summary>
    /// The copies made since <paramref name="before"/> that are still there once the other tests of this process
    /// reading a .etl.zip at the same time have had 10 s to finish theirs (a leaked copy stays for good).
    /// </summary>
    private static string[] CopiesLeftSince(string[] before)
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        string[] left;
        while ((left = CopiesLeft().Except(before).ToArray()).Length > 0 && DateTime.UtcNow < deadline)
            Thread.Sleep(100);
        return left;
    }

    /// <summary>Reference counts published with the external traces (dissect.etl and TraceEvent).</summary>
    [ExternalTraceTheory(ExternalEtl.PerfView, ExternalEtl.TraceLoggingTester)]
    [InlineData(ExternalEtl.PerfView, 179_474)]
    [InlineData(ExternalEtl.TraceLoggingTester, 172_716)]
    public void A_perfview_etl_zip_reads_as_the_etl_inside_it(string zip, int events)
    {
        var path = ExternalTraces.PathOf(zip);
        Assert.IsType<EtlZipFormat>(TraceFormats.All.Detect(path));
        using var extracted = new ExternalEtl(zip);
        int direct;
        using (var etl = EtlFileReader.Open(extracted.Path)) direct = Count(etl);

        var before = CopiesLeft();
        using (var reader = TraceFormats.All.Open(path))
        {
            Assert.Equal(events, Count(reader));
            Assert.Equal("etw", reader.Info.Backend);
            Assert.StartsWith(path + ":", reader.Info.TraceFile, StringComparison.Ordinal);
        }

        Assert.Equal(events, direct);
        Assert.Empty(CopiesLeftSince(before));
    }

    [Fact]
    public void A_zip_with_a_synthetic_etl_gives_its_events_and_leaves_no_copy()
    {
        using var dir = new TempDirectory("etlzip");
        var etl = EtlReaderTests.Convoy(new EtlTestWriter()).Build();
        var path = Zip(dir.File("t.etl.zip"), ("symbols/readme.txt", [1, 2, 3]), ("trace.etl", etl));
        var plain = dir.File("t.etl");
        File.WriteAllBytes(plain, etl);

        int expected;
        using (var r = EtlFileReader.Open(plain)) expected = Count(r);
        var before = CopiesLeft();
        using (var reader = TraceFormats.All.Open(path)) Assert.Equal(expected, Count(reader));
        Assert.True(expected > 100, $"{expected} events");
        Assert.Empty(CopiesLeftSince(before));
    }

    [Theory]
    [InlineData(0, "found 0 among 1 entries")]
    [InlineData(2, "found 2 among 2 entries")]
    public void A_zip_without_exactly_one_etl_is_refused_in_one_line(int etls, string expected)
    {
        using var dir = new TempDirectory("etlzip");
        var entries = etls == 0
            ? new (string, byte[])[] { ("notes.txt", [1]) }
            : [("a.etl", [1]), ("b.ETL", [2])];
        var path = Zip(dir.File("x.zip"), entries);

        var e = Assert.Throws<TraceFormatException>(() => TraceFormats.All.Open(path).Dispose());
        Assert.Contains("a zip archive holding one .etl file, " + expected, e.Message);
        Assert.DoesNotContain('\n', e.Message);
    }

    /// <summary>
    /// Truncated and corrupted archives: opening and reading either work or fail with a
    /// <see cref="TraceFormatException"/> (one line for the user), never another exception, and no copy is left behind.
    /// (It found a damaged buffer's CPU number indexing past the reader's per-CPU array.)
    /// </summary>
    [Fact]
    public void Damaged_archives_fail_cleanly_and_leave_no_copy()
    {
        using var dir = new TempDirectory("etlzip");
        var good = File.ReadAllBytes(Zip(dir.File("good.zip"),
            ("trace.etl", EtlReaderTests.Convoy(new EtlTestWriter()).Build())));
        var random = new Random(5);
        var before = CopiesLeft();
        var path = dir.File("bad.zip");
        int read = 0, refused = 0;
        for (var i = 0; i < 300; i++)
        {
            var bytes = (byte[])good.Clone();
            if (i % 3 == 0) bytes = bytes[..random.Next(4, bytes.Length)];
            else for (var k = 0; k < 1 + (i % 5); k++) bytes[random.Next(4, bytes.Length)] ^= (byte)random.Next(1, 256);
            File.WriteAllBytes(path, bytes);
            try
            {
                using var reader = TraceFormats.All.Open(path, new TraceReadOptions { Salvage = i % 2 == 0 });
                Count(reader);
                read++;
            }
            catch (TraceFormatException)
            {
                refused++;
            }
        }

        // Both ways out of the reader were taken, so the copies were cleaned up after reads and after refusals
        // (20 read and 280 refused from this seed).
        Assert.True(read >= 10 && refused >= 100, $"{read} damaged archives read, {refused} refused");
        Assert.Empty(CopiesLeftSince(before));
    }

    [Fact]
    public void The_etl_zip_format_is_registered_after_the_plain_etl()
    {
        var names = TraceFormats.All.Names.ToList();
        Assert.Equal(names.IndexOf("etl") + 1, names.IndexOf("etl.zip"));
    }

    private static string Zip(string path, params (string Name, byte[] Bytes)[] entries)
    {
        using (var archive = ZipFile.Open(path, ZipArchiveMode.Create))
        {
            foreach (var (name, bytes) in entries)
            {
                using var s = archive.CreateEntry(name).Open();
                s.Write(bytes);
            }
        }

        return path;
    }
}
