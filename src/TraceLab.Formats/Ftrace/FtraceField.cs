namespace TraceLab.Formats.Ftrace;

/// <summary>One field line of an ftrace event format file.</summary>
/// <param name="Name">Field name without array brackets.</param>
/// <param name="Type">The declared C type text (e.g. "pid_t", "char[16]", "__data_loc char[]").</param>
/// <param name="ArrayLength">Element count for fixed arrays, 0 for flexible arrays ("buf[]"), -1 for scalars.</param>
/// <param name="IsDynamic">A __data_loc / __rel_loc field: the 4 bytes hold (length &lt;&lt; 16 | offset).</param>
/// <param name="IsRelative">__rel_loc: the offset counts from the end of this field rather than the record
/// start.</param>
public sealed record FtraceField(
    string Name,
    string Type,
    int Offset,
    int Size,
    bool IsSigned,
    int ArrayLength,
    bool IsDynamic,
    bool IsRelative,
    bool IsCommon);
