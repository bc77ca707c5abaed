namespace TraceLab.Formats.TraceDat;

/// <summary>How <see cref="TraceDatReader"/> treats a damaged file, and which of its buffers it reads.</summary>
public sealed record TraceDatReadOptions
{
    public static TraceDatReadOptions Default { get; } = new();

    /// <summary>
    /// Read each CPU's events up to the first damage in its data (truncation or corruption) instead of failing, and
    /// describe what was skipped in <see cref="Core.TraceInfo.Damage"/>. Damaged metadata still fails: without it no
    /// event can be decoded.
    /// </summary>
    public bool Salvage { get; init; }

    /// <summary>
    /// The ring buffer to read: a trace instance's name, or "" (or "top") for the top-level buffer. Null reads the
    /// top-level buffer, or the first instance with events when the top level holds none. The file's buffers are
    /// listed in <see cref="Core.TraceInfo.Buffers"/>.
    /// </summary>
    public string? BufferName { get; init; }
}
