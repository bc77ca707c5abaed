using System.Globalization;

namespace TraceLab.Analyzers.Timeline;

/// <summary>
/// The span of the trace a timeline records: <see cref="StartOffsetNs"/> after the measured region's begin (the
/// first event when the trace has no begin marker), <see cref="LengthNs"/> long. Fixed before the pass so that the
/// analyzer keeps only what falls inside it (docs/metrics.md#timeline).
/// </summary>
public readonly record struct TimelineWindow(long StartOffsetNs, long LengthNs)
{
    /// <summary>
    /// 1 ms starting 10 ms into the region: past the workers' start-up, and short enough that each step of a convoy
    /// (about 10 µs per handoff) is several pixels wide at report width.
    /// </summary>
    public static readonly TimelineWindow Default = new(10_000_000, 1_000_000);

    /// <summary>The whole trace (used by exports, which draw every item).</summary>
    public static readonly TimelineWindow Everything = new(long.MinValue / 4, long.MaxValue / 2);

    /// <summary>Parses "START:LENGTH" in milliseconds from the region's begin, e.g. "10:4" or "0.5:2.5".</summary>
    /// <exception cref="FormatException">Not two numbers, a negative start, or a length not above 0.</exception>
    public static TimelineWindow Parse(string text)
    {
        var parts = text.Split(':');
        if (parts.Length != 2
            || !double.TryParse(parts[0], NumberStyles.Float, CultureInfo.InvariantCulture, out var start)
            || !double.TryParse(parts[1], NumberStyles.Float, CultureInfo.InvariantCulture, out var length))
            throw new FormatException($"timeline window '{text}' is not START:LENGTH in ms (e.g. 10:4)");
        if (start < 0 || double.IsNaN(start) || start > 1e9)
            throw new FormatException($"timeline window start {parts[0]} ms must be 0 or more");
        if (!(length > 0) || length > 1e9)
            throw new FormatException($"timeline window length {parts[1]} ms must be more than 0");
        return new TimelineWindow((long)Math.Round(start * 1e6), Math.Max(1, (long)Math.Round(length * 1e6)));
    }

    public override string ToString() =>
        string.Create(CultureInfo.InvariantCulture, $"{StartOffsetNs / 1e6:0.###}:{LengthNs / 1e6:0.###}");
}
