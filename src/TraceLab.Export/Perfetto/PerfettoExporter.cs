using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Core;

namespace TraceLab.Export.Perfetto;


/// <summary>
/// Writes a trace (any <see cref="IKernelTraceReader"/>: trace.dat, or .etl through the ETW mapping) as a Perfetto
/// protobuf trace in one streaming pass: the scheduler events as ftrace bundles while reading, TraceLab's convoy and
/// wakeup analysis of the same pass as TrackEvents after it (docs/viewers.md, "Perfetto mapping").
/// </summary>
public static class PerfettoExporter
{
    /// <param name="pid">The process whose threads get grouped and whose lock objects get tracks; null: the one
    /// that wrote the region begin marker (as the report does).</param>
    /// <param name="annotator">Adds labelled slices (the findings' windows) from the same pass; null: none.</param>
    public static PerfettoExportSummary Export(IKernelTraceReader reader, Stream output, int? pid = null,
        IExportAnnotator? annotator = null, CancellationToken cancellationToken = default)
    {
        var writer = new PerfettoPacketWriter(output);
        // Asked when the bundler needs it: a reader's counts of lost events may be complete only after the read.
        var bundler = new FtraceBundler(writer, reader.Threads,
            cpu => reader.Info.LostEventsPerCpu is { } lost && cpu >= 0 && cpu < lost.Length && lost[cpu] > 0);
        // With the reader's names: a later thread of a reused tid is named as it was (ThreadInstanceMap).
        var selection = AnalysisSelection.Convoys | AnalysisSelection.Wakeups
            | (annotator?.Selection ?? AnalysisSelection.None);
        var session = new AnalysisSession(selection, names: reader.Threads);
        var timeline = new TimelineAnalyzer(
            session.Accounting, TimelineWindow.Everything, recordSegments: false, maxItems: int.MaxValue);
        timeline.Observe(session.Convoys, session.Wakeups);
        var pass = new ExportPass(bundler, session, timeline);
        reader.Read(pass, cancellationToken);
        bundler.Complete();
        session.Complete();
        var accounting = session.Accounting;
        var end = accounting.Region.HasEnd ? accounting.Region.End : accounting.LastTimestamp;
        timeline.Complete(end);

        var processId = pid ?? (accounting.Region.MarkerTid > 0 ? accounting.Region.MarkerTid : 0);
        var process = processId > 0
            ? new ExportProcess(processId, session.Names.NameOf(processId),
                accounting.Lineage.Descendants(processId, accounting.Threads.Keys)
                    .Where(t => t != processId).Prepend(processId).ToList())
            : null;
        var tracks = new AnalysisTrackWriter(writer, session.Names, process, accounting.Lineage);
        tracks.WriteMetadata(reader.Info.KernelRelease, reader.Info.CpuCount,
            accounting.FirstTimestamp == long.MaxValue ? 0 : accounting.FirstTimestamp);
        tracks.WriteMarkers(pass.Markers);
        tracks.WriteAnalysis(timeline.Result());
        if (annotator is not null) tracks.WriteSlices(annotator.Slices(reader, session, pid));
        output.Flush();
        return new PerfettoExportSummary(
            writer.Packets, bundler.Switches, bundler.Wakings, bundler.WakeupNews, bundler.Migrations,
            bundler.Exits, bundler.Prints, bundler.Skipped, tracks.EpisodeSlices, tracks.HandoffFlows,
                tracks.FutileInstants,
            tracks.MarkerInstants, process)
        {
            NewTasks = bundler.NewTasks,
            Frees = bundler.Frees,
        };
    }

    /// <summary>
    /// One event to the ftrace writer, the analyzers and the timeline, delivering the region begin like
    /// <see cref="AnalysisPass"/>.
    /// </summary>
    private sealed class ExportPass(
        FtraceBundler bundler, AnalysisSession session, TimelineAnalyzer timeline) : IKernelEventSink
    {
        public List<ExportMarker> Markers { get; } = [];

        public void OnEvent(in KernelEvent e)
        {
            bundler.OnEvent(e);
            var openings = session.Accounting.Region.Openings;
            session.OnEvent(e);
            if (openings != session.Accounting.Region.Openings) timeline.OnRegionBegin();
            timeline.OnEvent(e);
            // The writer's thread id after the session's rewrite: a later thread of a reused tid has its own track.
            if (e.Kind == KernelEventKind.Marker && e.MarkerText is { } text)
                Markers.Add(new ExportMarker(e.Timestamp, session.Instances.IdOf(e.CurrentTid), text.TrimEnd('\n')));
        }
    }
}
