using Google.Protobuf;
using Perfetto.Protos;

namespace TraceLab.Export.Perfetto;

/// <summary>
/// Streams a Perfetto <c>Trace</c> one packet at a time: a Trace is just its repeated field 1, so writing
/// "tag 1, length, packet" for each packet produces the same bytes as serializing the whole Trace, without holding it.
/// </summary>
public sealed class PerfettoPacketWriter(Stream output)
{
    /// <summary>Field 1 (Trace.packet), wire type 2 (length-delimited).</summary>
    private const byte PacketTag = (1 << 3) | 2;

    private readonly Stream _output = output;

    public long Packets { get; private set; }

    public void Write(TracePacket packet)
    {
        _output.WriteByte(PacketTag);
        packet.WriteDelimitedTo(_output);
        Packets++;
    }
}
