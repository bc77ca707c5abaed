using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Core;
using TraceLab.Pipeline;

namespace TraceLab.Export.Perfetto;


/// <summary>
/// Writes a trace (any <see cref="IKernelTraceReader"/>: trace.dat, or .etl through the ETW mapping) as a Perfetto
/// protobuf trace in one streaming pass (the pipeline's, <see cref="TraceAnalysis"/>): the scheduler events as ftrace
/// bundles while reading, TraceLab's convoy and wakeup analysis of the same pass as TrackEvents after it
/// (docs/viewers.md, "Perfetto mapping").
/// </summary>
public static class PerfettoExporter
{
    /// <param name="pid">The process whose threads get grouped and whose lock objects get tracks; null: the one
    /// that wrote the region begin marker (as the report does).</param>
    /// <param name="annotator">Adds labelled slices (the findings' windows) from the same pass; null: none.</param>
    /// <param name="demangle">C++ frames named as perf script names them; false: as linked.</param>
    public static PerfettoExportSummary Export(IKernelTraceReader reader, Stream output, int? pid = null,
        IExportAnnotator? annotator = null, bool demangle = true, CancellationToken cancellationToken = default)
    {
        var observer = new ExportObserver(new PerfettoPacketWriter(output), pid, annotator, demangle);
        var selection = AnalysisSelection.Convoys | AnalysisSelection.Wakeups
            | (annotator?.Selection ?? AnalysisSelection.None);
        TraceAnalysis.Run(reader, new AnalysisRequest(reader.Info.TraceFile)
        {
            Analyses = selection,
            Pid = pid,
            Observer = observer,
        }, cancellationToken);
        output.Flush();
        return observer.Summary!;
    }

    /// <summary>
    /// The export's side of the pipeline's pass: the ftrace bundles and the timeline while reading, the analysis
    /// tracks and the annotator's slices once the report is built.
    /// </summary>
    private sealed class ExportObserver(
        PerfettoPacketWriter writer, int? pid, IExportAnnotator? annotator, bool demangle) : IPassObserver
    {
        private FtraceBundler? _bundler;
        private OffCpuStackWriter? _offCpu;
        private TimelineAnalyzer? _timeline;
        private ExportPass? _pass;

        public PerfettoExportSummary? Summary { get; private set; }

        public IKernelEventSink Attach(IKernelTraceReader reader, AnalysisSession session)
        {
            // Asked when the bundler needs it: a reader's counts of lost events may be complete only after the read.
            _bundler = new FtraceBundler(writer, reader.Threads,
                cpu => reader.Info.LostEventsPerCpu is { } lost && cpu >= 0 && cpu < lost.Length && lost[cpu] > 0);
            _timeline = new TimelineAnalyzer(
                session.Accounting, TimelineWindow.Everything, recordSegments: false, maxItems: int.MaxValue);
            _timeline.Observe(session.Convoys, session.Wakeups);
            // With stacks, the off-CPU intervals and their wakings carry them (named as `analyze` names them).
            if (reader is IStackTraceReader { HasStacks: true } stacks)
                _offCpu = new OffCpuStackWriter(writer, stacks, TraceAnalysis.Symbolizer(stacks, demangle),
                    reader.Threads, session.Instances.IdOf);
            return _pass = new ExportPass(_bundler, session, _timeline, _offCpu);
        }

        public void Complete(PassOutcome outcome)
        {
            var (bundler, timeline, pass) = (_bundler!, _timeline!, _pass!);
            var (reader, session) = (outcome.Reader, outcome.Session);
            bundler.Complete();
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
            if (annotator is not null) tracks.WriteSlices(annotator.Slices(outcome.Report));
            Summary = new PerfettoExportSummary(
                writer.Packets, bundler.Switches, bundler.Wakings, bundler.WakeupNews, bundler.Migrations,
                bundler.Exits, bundler.Prints, bundler.Skipped, tracks.EpisodeSlices, tracks.HandoffFlows,
                tracks.FutileInstants, tracks.MarkerInstants, process)
            {
                NewTasks = bundler.NewTasks,
                Frees = bundler.Frees,
                OffCpuSlices = _offCpu?.Slices ?? 0,
                WakerInstants = _offCpu?.WakerInstants ?? 0,
                Callstacks = _offCpu?.Callstacks ?? 0,
            };
        }
    }

    /// <summary>
    /// One event, after the analyses took it, to the ftrace writer and the timeline, delivering the region begin
    /// like <see cref="AnalysisPass"/>.
    /// </summary>
    private sealed class ExportPass(
        FtraceBundler bundler, AnalysisSession session, TimelineAnalyzer timeline, OffCpuStackWriter? offCpu)
        : IKernelEventSink
    {
        public List<ExportMarker> Markers { get; } = [];

        /// <summary>The region openings the timeline has been told of.</summary>
        private int _openings;

        public void OnEvent(in KernelEvent e)
        {
            bundler.OnEvent(e);
            // The analyses took the event first: a region it opened is seen here, before the timeline takes it.
            var openings = session.Accounting.Region.Openings;
            if (openings != _openings)
            {
                _openings = openings;
                timeline.OnRegionBegin();
            }
            timeline.OnEvent(e);
            offCpu?.OnEvent(e);
            // The writer's thread id after the session's rewrite: a later thread of a reused tid has its own track.
            if (e.Kind == KernelEventKind.Marker && e.MarkerText is { } text)
                Markers.Add(new ExportMarker(e.Timestamp, session.Instances.IdOf(e.CurrentTid), text.TrimEnd('\n')));
        }
    }
}
