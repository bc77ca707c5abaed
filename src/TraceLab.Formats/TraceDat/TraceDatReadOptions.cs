namespace TraceLab.Formats.TraceDat;

/// <summary>How <see cref="TraceDatReader"/> treats a damaged file.</summary>
public sealed record TraceDatReadOptions
{
    public static TraceDatReadOptions Default { get; } = new();

    /// <summary>
    /// Read each CPU's events up to the first damage in its data (truncation or corruption) instead of failing, and
    /// describe what was skipped in <see cref="Core.TraceInfo.Damage"/>. Damaged metadata still fails: without it no
    /// event can be decoded.
    /// </summary>
    public bool Salvage { get; init; }
}
