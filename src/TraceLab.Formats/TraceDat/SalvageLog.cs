using System.Globalization;
using TraceLab.Core;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// The CPU data a salvaging read stepped over, summarized into <see cref="TraceInfo"/> for the report.
/// </summary>
internal sealed class SalvageLog
{
    private readonly List<DataDamage> _damage = new();
    private readonly int _pageSize;

    public SalvageLog(int pageSize, IEnumerable<DataDamage> cutAtEndOfFile)
    {
        _pageSize = pageSize;
        foreach (var d in cutAtEndOfFile) Add(d);
    }

    public void Add(CpuCursor cursor, TraceFormatException error)
    {
        var offset = Math.Min(error.Offset, cursor.End);
        Add(new DataDamage(cursor.Buffer, cursor.Cpu, offset, cursor.End, "expected " + ExpectedPart(error)));
    }

    /// <summary>
    /// <paramref name="info"/> with the skipped bytes per CPU and a one-paragraph description of the damage (itself
    /// when there was none).
    /// </summary>
    public TraceInfo Describe(TraceInfo info)
    {
        if (_damage.Count == 0) return info;
        var perCpu = new long[info.CpuCount];
        var parts = new List<string>();
        foreach (var d in _damage.OrderBy(d => d.Buffer, StringComparer.Ordinal).ThenBy(d => d.Cpu))
        {
            var bytes = d.End - d.Offset;
            if (d.Cpu >= 0 && d.Cpu < perCpu.Length) perCpu[d.Cpu] += bytes;
            var pages = (bytes + _pageSize - 1) / _pageSize;
            var who = d.Buffer.Length == 0 ? $"CPU {d.Cpu}" : $"CPU {d.Cpu} of buffer '{d.Buffer}'";
            parts.Add(string.Create(CultureInfo.InvariantCulture,
                $"{who}: {bytes:N0} bytes ({pages:N0} pages) skipped from offset {d.Offset} ({d.Reason})"));
        }

        return info with
        {
            SkippedBytesPerCpu = perCpu,
            Damage = "salvaged a damaged trace: " + string.Join("; ", parts)
                + "; the events after the damage are missing, so the analysis of each damaged CPU ends early",
        };
    }

    private void Add(DataDamage d)
    {
        // One CPU can be cut at the end of the file and fail earlier too; reading stopped at the earlier point.
        var i = _damage.FindIndex(x => x.Buffer == d.Buffer && x.Cpu == d.Cpu);
        if (i < 0) _damage.Add(d);
        else if (d.Offset < _damage[i].Offset) _damage[i] = d with { End = Math.Max(d.End, _damage[i].End) };
    }

    /// <summary>The message without the file and offset prefix, which the description states itself.</summary>
    private static string ExpectedPart(TraceFormatException e)
    {
        var prefix = $"{e.File}: at offset {e.Offset}: ";
        return e.Message.StartsWith(prefix, StringComparison.Ordinal) ? e.Message[prefix.Length..] : e.Message;
    }
}
