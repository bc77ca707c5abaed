namespace TraceLab.Formats.Registry;

/// <summary>How a reader opened through the registry treats its file; formats ignore what they cannot do.</summary>
public sealed record TraceReadOptions
{
    public static TraceReadOptions Default { get; } = new();

    /// <summary>
    /// Read up to the first damage (per CPU where the format has per-CPU streams) instead of failing, and say what
    /// was skipped in <see cref="Core.TraceInfo.Damage"/>.
    /// </summary>
    public bool Salvage { get; init; }
}
