using Perfetto.Protos;

namespace TraceLab.Tests.Export;

/// <summary>
/// A written Perfetto trace decoded with the same protobuf definitions, with the views tests ask about.
/// </summary>
internal sealed class PerfettoTraceFile
{
    public PerfettoTraceFile(byte[] bytes)
    {
        Bytes = bytes;
        Trace = Trace.Parser.ParseFrom(bytes);
    }

    public byte[] Bytes { get; }
    public Trace Trace { get; }

    public IEnumerable<(uint Cpu, FtraceEvent Event)> Ftrace =>
        Trace.Packet.Where(p => p.DataCase == TracePacket.DataOneofCase.FtraceEvents)
            .SelectMany(p => p.FtraceEvents.Event.Select(e => (p.FtraceEvents.Cpu, e)));

    public IEnumerable<(ulong Ts, TrackEvent Event)> TrackEvents =>
        Trace.Packet.Where(p => p.DataCase == TracePacket.DataOneofCase.TrackEvent)
            .Select(p => (p.Timestamp, p.TrackEvent));

    public Dictionary<ulong, TrackDescriptor> Tracks =>
        Trace.Packet.Where(p => p.DataCase == TracePacket.DataOneofCase.TrackDescriptor)
            .ToDictionary(p => p.TrackDescriptor.Uuid, p => p.TrackDescriptor);

    /// <summary>Slice begins on the tracks named "convoys: …".</summary>
    public List<(ulong Ts, TrackEvent Event)> EpisodeBegins()
    {
        var tracks = Tracks;
        return TrackEvents.Where(t => t.Event.Type == TrackEvent.Types.Type.SliceBegin
            && tracks.TryGetValue(t.Event.TrackUuid, out var d)
                && d.Name.StartsWith("convoys: ", StringComparison.Ordinal)).ToList();
    }
}
