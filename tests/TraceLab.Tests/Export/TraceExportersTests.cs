using TraceLab.Cli;
using TraceLab.Export;
using TraceLab.Export.Perfetto;

namespace TraceLab.Tests.Export;

/// <summary>The exporter seam: well-formed registry entries; Perfetto behind it writes what it wrote before.</summary>
public sealed class TraceExportersTests
{
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");

    [Fact]
    public void Every_exporter_has_a_unique_lower_case_name_and_a_dotted_extension()
    {
        Assert.NotEmpty(TraceExporters.All);
        Assert.Equal(TraceExporters.All.Count, TraceExporters.Names.Distinct().Count());
        foreach (var e in TraceExporters.All)
        {
            Assert.Equal(e.Name.ToLowerInvariant(), e.Name);
            Assert.StartsWith(".", e.Extension);
            Assert.False(string.IsNullOrWhiteSpace(e.Description));
            Assert.Same(e, TraceExporters.Find(e.Name.ToUpperInvariant()));
        }
        Assert.Null(TraceExporters.Find("chrome"));
    }

    [Fact]
    public void Perfetto_through_the_seam_writes_the_same_bytes_and_says_what_it_wrote()
    {
        using var direct = new MemoryStream();
        PerfettoExportSummary expected;
        using (var reader = TraceFiles.Open(Sample)) expected = PerfettoExporter.Export(reader, direct);

        using var seam = new MemoryStream();
        IExportSummary summary;
        using (var reader = TraceFiles.Open(Sample))
            summary = TraceExporters.Find("perfetto")!.Export(reader, seam, ExportOptions.Default);

        Assert.Equal(direct.ToArray(), seam.ToArray());
        Assert.Equal(expected with { Process = null }, ((PerfettoExportSummary)summary) with { Process = null });
        var lines = summary.Lines(new ExportedFile("/x/sample.pftrace", 3 * 1048576, TimeSpan.FromSeconds(1.5)));
        Assert.Equal(2, lines.Count);
        Assert.StartsWith(
            $"Perfetto trace /x/sample.pftrace: 3.0 MiB, {expected.Packets:N0} packets in 1.50 s — ", lines[0]);
        Assert.Contains($"{expected.Switches:N0} sched_switch", lines[0]);
        Assert.Contains($"{expected.EpisodeSlices:N0} convoy episodes", lines[0]);
        Assert.Contains("ui.perfetto.dev", lines[1]);
    }
}
