using TraceLab.Core;

namespace TraceLab.Formats.Ftrace;

/// <summary>Ring-buffer page header layout from tracefs events/header_page.</summary>
public sealed record HeaderPageLayout(
    int TimestampOffset, int TimestampSize, int CommitOffset, int CommitSize, int DataOffset, int DataSize)
{
    /// <summary>Whole sub-buffer size: header plus data area.</summary>
    public int PageSize => DataOffset + DataSize;

    /// <summary>
    /// The x86-64 layout (4 KiB pages, 64-bit local_t commit), for tests and when no header_page is at hand.
    /// </summary>
    public static HeaderPageLayout Default64 { get; } = new(0, 8, 8, 8, 16, 4080);

    /// <exception cref="TraceFormatException">A required field is missing or the sizes make no sense.</exception>
    public static HeaderPageLayout Parse(string text)
    {
        FtraceField? ts = null, commit = null, data = null;
        foreach (var line in text.Split('\n'))
        {
            if (!FormatFieldLine.TryParse(line, false, out var f)) continue;
            switch (f.Name)
            {
                case "timestamp": ts = f; break;
                case "commit": commit = f; break;
                case "data": data = f; break;
            }
        }

        if (ts is null || commit is null || data is null)
            throw new TraceFormatException("header_page: expected fields timestamp, commit and data");
        // The page header is read before any length is known, so both words must lie inside it.
        if (ts.Size != 8 || commit.Size is not (4 or 8) || data.Offset < commit.Offset + commit.Size
            || data.Offset < ts.Offset + ts.Size ||
            data.Size <= 0 || data.Offset + data.Size > 1 << 24)
            throw new TraceFormatException($"header_page: unexpected layout (timestamp size {ts.Size}, commit size "
                + $"{commit.Size}, data {data.Offset}+{data.Size})");
        return new HeaderPageLayout(ts.Offset, ts.Size, commit.Offset, commit.Size, data.Offset, data.Size);
    }
}
