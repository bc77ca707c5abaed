using Perfetto.Protos;

namespace TraceLab.Export.Perfetto;

/// <summary>
/// One trusted packet sequence of TrackEvents and track descriptors: its first packet says the sequence starts with
/// cleared incremental state (trace_processor trusts a sequence's interned entries only after that); a packet that
/// refers to interned entries says it needs that state.
/// </summary>
public sealed class TrackEventSequence(PerfettoPacketWriter writer, uint id)
{
    private bool _first = true;

    /// <summary>The sequence's trusted id.</summary>
    public uint Id => id;

    /// <summary>A TrackEvent of <paramref name="type"/> on <paramref name="track"/>, named, in one category.</summary>
    public static TrackEvent Event(TrackEvent.Types.Type type, ulong track, string name, string category)
    {
        var ev = new TrackEvent { Type = type, TrackUuid = track, Name = name };
        ev.Categories.Add(category);
        return ev;
    }

    /// <summary>Writes a TrackEvent at <paramref name="timestamp"/> (ns; negative is written as 0).</summary>
    /// <param name="interned">Entries defined by this packet (written when it holds any).</param>
    /// <param name="usesInterned">The event refers to interned entries of the sequence.</param>
    public void Emit(long timestamp, TrackEvent ev, InternedData? interned = null, bool usesInterned = false)
    {
        var packet = new TracePacket
        {
            Timestamp = (ulong)Math.Max(0, timestamp),
            TrackEvent = ev,
            TrustedPacketSequenceId = id,
        };
        if (interned is { } i && !IsEmpty(i)) packet.InternedData = i;
        Mark(packet);
        if (usesInterned && !packet.FirstPacketOnSequence)
            packet.SequenceFlags = (uint)TracePacket.Types.SequenceFlags.SeqNeedsIncrementalState;
        writer.Write(packet);
    }

    /// <summary>Writes a track's descriptor.</summary>
    public void Describe(TrackDescriptor descriptor)
    {
        var packet = new TracePacket { TrackDescriptor = descriptor, TrustedPacketSequenceId = id };
        Mark(packet);
        writer.Write(packet);
    }

    private static bool IsEmpty(InternedData i) =>
        i.Callstacks.Count == 0 && i.Frames.Count == 0 && i.FunctionNames.Count == 0 && i.Mappings.Count == 0
        && i.MappingPaths.Count == 0 && i.SourcePaths.Count == 0 && i.BuildIds.Count == 0;

    private void Mark(TracePacket packet)
    {
        if (!_first) return;
        _first = false;
        packet.FirstPacketOnSequence = true;
        packet.SequenceFlags = (uint)TracePacket.Types.SequenceFlags.SeqIncrementalStateCleared;
    }
}
