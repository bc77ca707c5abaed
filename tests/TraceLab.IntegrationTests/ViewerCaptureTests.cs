using System.Text.RegularExpressions;
using Perfetto.Protos;
using TraceLab.Analyzers;
using TraceLab.Cli;
using TraceLab.Export.Perfetto;

namespace TraceLab.IntegrationTests;

/// <summary>A real `trace timemutex mutex`: its report.html and its Perfetto export agree with its report.</summary>
public sealed class ViewerCaptureTests
{
    [TracingFact]
    public void Fresh_capture_gives_a_timeline_and_an_export_that_agree_with_the_report()
    {
        using var run = Capture.Trace("timemutex", "mutex", ("iterations", "20000"));
        var report = run.Report;
        Assert.True(report.Region.DurationNs > 12_000_000,
            $"region only {report.Region.DurationNs} ns: the default timeline window (10:1 ms) is past it");

        var html = File.ReadAllText(Path.Combine(run.Directory, "report.html"));
        var rows =
            Regex.Matches(html, "<g class=\"tl-row\" data-tid=\"(\\d+)\"").Select(m => int.Parse(m.Groups[1].Value));
        Assert.Equal(report.Threads.Select(t => t.Tid), rows);
        // under load the workers may not run in a 1 ms window, but they are in some state
        Assert.Contains("<rect class=\"seg ", html);

        using var reader = TraceFiles.Open(run.TraceFile);
        using var ms = new MemoryStream();
        var summary = PerfettoExporter.Export(reader, ms);
        var trace = Trace.Parser.ParseFrom(ms.ToArray());
        var switches = trace.Packet.Where(p => p.FtraceEvents is not null)
            .Sum(p => p.FtraceEvents.Event.Count(e => e.SchedSwitch is not null));
        Assert.Equal(report.Capture.SwitchEvents, switches);
        // Flows and episodes cover every lock object of the trace (the report lists only the workload's objects;
        // other processes, e.g. TraceLab's own page-copy threads, have futex handoffs too): the convoy analyzer's
        // totals.
        using var again = TraceFiles.Open(run.TraceFile);
        // The exporter's own session: the same analyses and the reader's thread table (which names TraceLab's own
        // threads, left out of both).
        var session = new AnalysisSession(AnalysisSelection.Convoys | AnalysisSelection.Wakeups, names: again.Threads);
        again.Read(session);
        session.Complete();
        var flows = trace.Packet.Count(p => p.TrackEvent is not null && p.TrackEvent.FlowIds.Count > 0);
        Assert.Equal(session.Convoys!.Objects.Sum(o => o.Handoffs), flows);
        Assert.Equal(session.Convoys.Objects.Sum(o => o.Episodes), summary.EpisodeSlices);
        // The workload's own lock carries the convoy: all its handoffs are among the flows.
        var workloadHandoffs = report.Convoys!.Objects.Sum(o => o.Handoffs);
        Assert.True(workloadHandoffs > 100 && workloadHandoffs <= flows,
            $"{workloadHandoffs} workload handoffs, {flows} flows");
        Assert.Equal(report.Process!.Pid, summary.Process!.Pid);
    }
}
