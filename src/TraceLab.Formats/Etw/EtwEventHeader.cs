namespace TraceLab.Formats.Etw;

/// <summary>
/// The parts of an ETW EVENT_RECORD header the kernel event mapping needs, copied out by whatever reads the events
/// (an .etl reader, a real-time session) so the mapping itself runs, and is tested, without Windows.
/// </summary>
/// <param name="EventGuid">
/// For the classic (MOF) kernel events this is the task GUID (the kernel logger writes it in EVENT_HEADER.ProviderId),
/// e.g. <see cref="EtwKernelEvents.ThreadGuid"/>.
/// </param>
/// <param name="Opcode">Selects the event within <paramref name="EventGuid"/> (classic events have no event
/// id).</param>
/// <param name="Version">EVENT_HEADER.Version: the payload layout revision.</param>
/// <param name="Timestamp">Nanoseconds on the trace clock.</param>
/// <param name="Cpu">The processor that logged the event (BufferContext.ProcessorNumber).</param>
/// <param name="ThreadId">EVENT_HEADER.ThreadId; -1 (<see cref="UnknownThread"/>) when the kernel did not record
/// it.</param>
/// <param name="PointerSize">4 or 8: the pointer size of the machine that logged the event (header 32/64-bit
/// flag).</param>
public readonly record struct EtwEventHeader(
    Guid EventGuid, byte Opcode, byte Version, long Timestamp, int Cpu, int ThreadId, int PointerSize)
{
    /// <summary>The value ETW puts in EVENT_HEADER.ThreadId when the logging thread is not known.</summary>
    public const int UnknownThread = -1;
}
