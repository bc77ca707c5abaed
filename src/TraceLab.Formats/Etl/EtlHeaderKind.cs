namespace TraceLab.Formats.Etl;

/// <summary>The event header forms an .etl buffer holds (the HeaderType byte of each record's marker).</summary>
public enum EtlHeaderKind : byte
{
    /// <summary>SYSTEM_TRACE_HEADER (0x20 bytes): kernel event with thread, process and CPU times.</summary>
    System,
    /// <summary>The first 0x18 bytes of SYSTEM_TRACE_HEADER: thread, process and time stamp.</summary>
    Compact,
    /// <summary>PERFINFO_TRACE_HEADER (0x10 bytes): hook and time stamp only, no thread.</summary>
    PerfInfo,
    /// <summary>Classic EVENT_TRACE_HEADER (0x30 bytes) with an inline GUID.</summary>
    Full,
    /// <summary>EVENT_INSTANCE_GUID_HEADER (0x48 bytes).</summary>
    Instance,
    /// <summary>EVENT_HEADER (0x50 bytes), optionally followed by extended data items.</summary>
    EventHeader,
    /// <summary>WPP message header (marker top byte 0x90).</summary>
    Message,
    /// <summary>A header type this reader does not know; the record is skipped by its size.</summary>
    Unknown,
}
