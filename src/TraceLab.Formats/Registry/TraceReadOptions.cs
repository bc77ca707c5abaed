namespace TraceLab.Formats.Registry;

/// <summary>How a reader opened through the registry treats its file; formats ignore what they cannot do.</summary>
public sealed record TraceReadOptions
{
    public static TraceReadOptions Default { get; } = new();

    /// <summary>
    /// Read up to the first damage (per CPU where the format has per-CPU streams) instead of failing, and say what
    /// was skipped in <see cref="Core.TraceInfo.Damage"/>. Damaged metadata still fails: without it no event can be
    /// decoded.
    /// </summary>
    public bool Salvage { get; init; }

    /// <summary>
    /// trace.dat: the ring buffer (trace instance) to read, "" or "top" for the top level; null for the default
    /// (see <see cref="TraceReadOptions.BufferName"/>). Formats without buffers ignore it.
    /// </summary>
    public string? BufferName { get; init; }

    /// <summary>
    /// trace.dat: join the stacks of its stack recording when one lies beside it (<c>tracelab trace --stacks</c>).
    /// </summary>
    public bool JoinStackFile { get; init; } = true;
}
