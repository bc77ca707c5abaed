namespace TraceLab.Formats.Etl;

/// <summary>
/// One event record of a buffer, as its header describes it. <see cref="Hook"/> identifies kernel-style events
/// (group &lt;&lt; 8 | type); <see cref="Guid"/> the others (classic inline GUID, EVENT_HEADER ProviderId).
/// </summary>
public struct EtlEventRecord
{
    public EtlHeaderKind Kind;
    /// <summary>4 or 8: the pointer size of the payload, from the header type's 32/64-bit variant.</summary>
    public int PointerSize;
    /// <summary>Bytes from this record's start to the next one (Size rounded up to 8).</summary>
    public int Stride;
    public ushort Hook;
    public Guid Guid;
    public byte Opcode;
    /// <summary>The event (layout) version, extension flags removed.</summary>
    public byte Version;
    /// <summary>EVENT_HEADER event id (0 for the other kinds).</summary>
    public ushort EventId;
    /// <summary>-1 for PERFINFO headers, which log no thread.</summary>
    public int ThreadId;
    public int ProcessId;
    /// <summary>Raw time stamp in the session clock.</summary>
    public long RawTimestamp;
    public int PayloadOffset;
    public int PayloadLength;

    public readonly bool IsKernelStyle =>
        Kind is EtlHeaderKind.System or EtlHeaderKind.Compact or EtlHeaderKind.PerfInfo;
}
