using Perfetto.Protos;
using TraceLab.Analyzers.Timeline;
using TraceLab.Cli;
using TraceLab.Export;
using TraceLab.Export.Perfetto;
using TraceLab.Reporting;
using TraceLab.Tests.Export;

namespace TraceLab.Tests.Findings;

/// <summary>The findings' windows in the Perfetto export: one slice per window, where the stored report puts
/// it.</summary>
public sealed class FindingsExportTests
{
    [Fact]
    public void Every_window_of_the_stored_report_is_a_slice_on_the_findings_track()
    {
        var dir = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex");
        var stored = ReportJson.Deserialize(File.ReadAllText(Path.Combine(dir, "report.json")));
        using var reader = TraceFiles.Open(Path.Combine(dir, "trace.dat"));
        using var ms = new MemoryStream();
        PerfettoExporter.Export(reader, ms, annotator: new FindingsAnnotator());
        var file = new PerfettoTraceFile(ms.ToArray());

        var tracks = file.Tracks.Values.Where(t => t.Name.StartsWith("TraceLab finding #",
            StringComparison.Ordinal)).ToList();
        Assert.Equal(stored.Findings!.Select((f, i) => $"TraceLab finding #{i + 1}: {f.Kind}"),
            tracks.Select(t => t.Name));
        for (var i = 0; i < tracks.Count; i++)
        {
            var f = stored.Findings![i];
            var events = file.TrackEvents.Where(e => e.Event.TrackUuid == tracks[i].Uuid).ToList();
            var begins = events.Where(e => e.Event.Type == TrackEvent.Types.Type.SliceBegin).ToList();
            var ends = events.Where(e => e.Event.Type == TrackEvent.Types.Type.SliceEnd).ToList();
            var windows = f.Windows.OrderBy(w => w.StartOffsetNs).ToList();
            Assert.NotEmpty(windows);
            Assert.Equal(windows.Select(w => (ulong)(stored.Region.BeginNs + w.StartOffsetNs)),
                begins.Select(b => b.Ts));
            Assert.Equal(windows.Select(w => (ulong)Math.Min(stored.Region.EndNs,
                stored.Region.BeginNs + w.StartOffsetNs + w.LengthNs)), ends.Select(b => b.Ts));
            Assert.All(begins, b => Assert.StartsWith($"{f.Kind} ", b.Event.Name));
        }
    }
}
