using System.Text.Json.Nodes;
using Google.Protobuf;
using Perfetto.Protos;
using TraceLab.Analyzers;
using TraceLab.Cli;
using TraceLab.Core;
using TraceLab.Export.Perfetto;

namespace TraceLab.Tests.Export;

/// <summary>
/// The checked-in mutex sample exported to Perfetto and decoded again: the scheduler events match the trace.dat
/// event for event, and the analysis tracks match the report stored beside the sample (an earlier, independent run).
/// </summary>
public sealed class PerfettoExportTests
{
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex");
    private static readonly Lazy<(PerfettoTraceFile File, PerfettoExportSummary Summary)> Exported = new(() =>
    {
        using var reader = TraceFiles.Open(Path.Combine(Sample, "trace.dat"));
        using var ms = new MemoryStream();
        var summary = PerfettoExporter.Export(reader, ms);
        return (new PerfettoTraceFile(ms.ToArray()), summary);
    });

    /// <summary>Every event of the trace.dat, read without the exporter.</summary>
    private static (List<KernelEvent> Events, ThreadTable Names) Source()
    {
        using var reader = TraceFiles.Open(Path.Combine(Sample, "trace.dat"));
        var sink = new Collect();
        reader.Read(sink);
        return (sink.Events, reader.Threads);
    }

    private sealed class Collect : IKernelEventSink
    {
        public List<KernelEvent> Events { get; } = [];
        public void OnEvent(in KernelEvent e) => Events.Add(e);
    }

    private static JsonNode StoredReport => JsonNode.Parse(File.ReadAllText(Path.Combine(Sample, "report.json")))!;

    [Fact]
    public void File_is_a_valid_Trace_message_written_packet_by_packet()
    {
        var f = Exported.Value.File;
        // Streaming "tag 1 + length + packet" must give exactly the bytes of the whole Trace message.
        Assert.Equal(f.Bytes, f.Trace.ToByteArray());
        Assert.Equal(Exported.Value.Summary.Packets, f.Trace.Packet.Count);
    }

    [Fact]
    public void Scheduler_events_match_the_trace_dat_one_for_one()
    {
        var (events, names) = Source();
        var f = Exported.Value.File;
        var switches =
            events.Where(e => e.Kind == KernelEventKind.Switch).OrderBy(e => e.Timestamp).ThenBy(e => e.Cpu).ToList();
        var written = f.Ftrace.Where(x => x.Event.EventCase == FtraceEvent.EventOneofCase.SchedSwitch)
            .OrderBy(x => x.Event.Timestamp).ThenBy(x => x.Cpu).ToList();
        Assert.Equal(switches.Count, written.Count);
        Assert.True(switches.Count > 1000, $"sample has only {switches.Count} switches");
        Assert.Equal((long)switches.Count, JsonNode.Parse(
            File.ReadAllText(Path.Combine(Sample, "report.json")))!["capture"]!["switchEvents"]!.GetValue<long>());
        // A sample of slices: every 97th switch, field by field.
        for (var i = 0; i < switches.Count; i += 97)
        {
            var (cpu, w) = written[i];
            var s = switches[i];
            Assert.Equal((ulong)s.Timestamp, w.Timestamp);
            Assert.Equal((uint)s.Cpu, cpu);
            Assert.Equal(s.PrevTid, w.SchedSwitch.PrevPid);
            Assert.Equal(s.NextTid, w.SchedSwitch.NextPid);
            Assert.Equal(s.PrevState, w.SchedSwitch.PrevState);
            Assert.Equal(s.PrevPrio, w.SchedSwitch.PrevPrio);
            Assert.Equal(s.NextTid == 0 ? $"swapper/{s.Cpu}" : names.NameOf(s.NextTid), w.SchedSwitch.NextComm);
        }
        var wakings = events.Where(e => e.Kind == KernelEventKind.Waking).ToList();
        var writtenWakings = f.Ftrace.Where(x => x.Event.EventCase == FtraceEvent.EventOneofCase.SchedWaking)
            .Select(x => x.Event).ToList();
        Assert.Equal(wakings.Count, writtenWakings.Count);
        // The waker is the event's pid: that is where ui.perfetto.dev gets "woken by".
        Assert.Equal(wakings.Select(e => (e.Timestamp, e.CurrentTid, e.WokenTid)).Order(),
            writtenWakings.Select(e => ((long)e.Timestamp, (int)e.Pid, e.SchedWaking.Pid)).Order());
    }

    [Fact]
    public void Markers_become_print_events_and_instants()
    {
        var (events, _) = Source();
        var markers = events.Where(e => e.Kind == KernelEventKind.Marker).Select(e => e.Text!.TrimEnd('\n')).ToList();
        Assert.Contains(markers, m => m.StartsWith(MeasuredRegion.BeginMarker, StringComparison.Ordinal));
        var f = Exported.Value.File;
        Assert.Equal(markers, f.Ftrace.Where(x => x.Event.EventCase == FtraceEvent.EventOneofCase.Print)
            .Select(x => x.Event.Print.Buf.TrimEnd('\n')));
        Assert.Equal(
            markers, f.TrackEvents.Where(t => t.Event.Categories.Contains("marker")).Select(t => t.Event.Name));
    }

    [Fact]
    public void Process_tree_names_the_workload_and_its_threads()
    {
        var report = StoredReport;
        var pid = report["process"]!["pid"]!.GetValue<int>();
        var tree = Assert.Single(
            Exported.Value.File.Trace.Packet, p => p.DataCase == TracePacket.DataOneofCase.ProcessTree).ProcessTree;
        var process = Assert.Single(tree.Processes);
        Assert.Equal(pid, process.Pid);
        Assert.Equal(report["process"]!["name"]!.GetValue<string>(), process.Cmdline.Single());
        // Every thread the report lists belongs to the process in the tree, with the report's name.
        foreach (var t in report["threads"]!.AsArray())
        {
            var thread = Assert.Single(tree.Threads, x => x.Tid == t!["tid"]!.GetValue<int>());
            Assert.Equal(pid, thread.Tgid);
            Assert.Equal(t!["name"]!.GetValue<string>(), thread.Name);
        }
        var info = Assert.Single(
            Exported.Value.File.Trace.Packet, p => p.DataCase == TracePacket.DataOneofCase.SystemInfo).SystemInfo;
        Assert.Equal(report["capture"]!["kernel"]!.GetValue<string>(), info.Utsname.Release);
    }

    [Fact]
    public void Analysis_tracks_match_the_stored_report()
    {
        var report = StoredReport;
        var objects = report["convoys"]!["objects"]!.AsArray();
        var f = Exported.Value.File;

        // Handoff flows: one per handoff the report counts, from the giver's track to the receiver's.
        var starts = f.TrackEvents.Where(t => t.Event.FlowIds.Count > 0).ToList();
        var ends = f.TrackEvents.Where(t => t.Event.TerminatingFlowIds.Count > 0)
            .ToDictionary(t => t.Event.TerminatingFlowIds.Single());
        Assert.Equal(objects.Sum(o => o!["handoffs"]!.GetValue<long>()), starts.Count);
        Assert.Equal(starts.Count, ends.Count);
        foreach (var (ts, start) in starts)
        {
            var (endTs, end) = ends[start.FlowIds.Single()];
            Assert.NotEqual(start.TrackUuid, end.TrackUuid);
            Assert.Equal(ts, endTs); // the receiver's slice starts when the giver woke it
        }

        // Convoy episodes: one slice per counted episode, on the track of its lock object.
        var episodes = f.EpisodeBegins();
        Assert.Equal(objects.Sum(o => o!["episodes"]!.GetValue<long>()), episodes.Count);
        var tracks = f.Tracks;
        var convoyObjects = objects.Where(o => o!["episodes"]!.GetValue<long>() > 0)
            .Select(o => "convoys: " + o!["object"]!.GetValue<string>()).Order();
        Assert.Equal(convoyObjects, episodes.Select(e => tracks[e.Event.TrackUuid].Name).Distinct().Order());
        // The longest episode is the report's longest chain.
        Assert.Equal(objects.Max(o => o!["longestChain"]!.GetValue<long>()),
            episodes.Max(e => e.Event.DebugAnnotations.Single(a => a.Name == "handoffs").IntValue));
    }

    [Fact]
    public void Futile_wakeups_are_the_wakeup_analyzers()
    {
        using var reader = TraceFiles.Open(Path.Combine(Sample, "trace.dat"));
        var session = new AnalysisSession(AnalysisSelection.Wakeups);
        reader.Read(session);
        session.Complete();
        var futile = session.Wakeups!.Threads.Values.Sum(t => t.Futile);
        Assert.True(futile > 0, "the sample has futile wakeups");
        Assert.Equal(futile, Exported.Value.File.TrackEvents.Count(t => t.Event.Name == "futile wakeup"));
        // The report counts the workload's threads; their futile wakeups are among the exported ones.
        var reported = StoredReport["wakeups"]!["threads"]!.AsArray().Sum(t => t!["futile"]!.GetValue<long>());
        Assert.True(reported <= futile);
    }
}
