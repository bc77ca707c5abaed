using TraceLab.Core;

namespace TraceLab.Formats.TraceDat;

/// <summary>Which of a trace.dat's ring buffers (top level and trace instances) a read uses.</summary>
internal static class TraceDatBuffers
{
    /// <summary>
    /// The requested buffer ("" or "top" for the top level, else an instance name); without a request the top-level
    /// buffer, unless it holds no events and an instance does (a file recorded or extracted from one instance only).
    /// </summary>
    /// <exception cref="TraceFormatException">
    /// No buffer of the requested name, or the chosen one holds only text.
    /// </exception>
    public static string Select(TraceDatMetadata meta, string? requested, string path)
    {
        string chosen;
        if (requested is not null)
        {
            chosen = requested == "top" && !meta.Buffers.Contains("top") ? "" : requested;
            if (!meta.Buffers.Contains(chosen) && !meta.TextBuffers.Contains(chosen))
                throw new TraceFormatException(path, 0, $"a buffer named '{requested}'; the file has {Describe(meta)}");
        }
        else
        {
            bool HasData(string b) => meta.Data.Any(d => d.Buffer == b && d.Size > 0);
            chosen = HasData("") ? "" : meta.Buffers.FirstOrDefault(HasData) ?? "";
        }

        if (meta.TextBuffers.Contains(chosen) && !meta.Buffers.Contains(chosen))
            throw new TraceFormatException(path, 0,
                $"flyrecord data in buffer '{DisplayName(chosen)}' (latency-format text buffers are not supported)");
        return chosen;
    }

    /// <summary>How reports name a buffer: "top" for the top-level one, else the instance name.</summary>
    public static string DisplayName(string buffer) => buffer.Length == 0 ? "top" : buffer;

    private static string Describe(TraceDatMetadata meta)
    {
        var names = meta.Buffers.Concat(meta.TextBuffers).Distinct().Select(b => $"'{DisplayName(b)}'").ToList();
        return names.Count == 0 ? "no buffers" : "the buffers " + string.Join(", ", names);
    }
}
