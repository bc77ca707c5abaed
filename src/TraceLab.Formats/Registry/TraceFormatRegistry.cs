using TraceLab.Core;

namespace TraceLab.Formats.Registry;

/// <summary>
/// An ordered list of <see cref="ITraceFormat"/>s: a file is read by the first format whose
/// <see cref="ITraceFormat.Matches"/> accepts its first bytes. The extension of the file name plays no part.
/// </summary>
public sealed class TraceFormatRegistry
{
    /// <summary>Bytes of the file's start every format's sniffing sees (enough for an .etl's first header).</summary>
    public const int HeadLength = 256;

    public TraceFormatRegistry(IEnumerable<ITraceFormat> formats) => Formats = [.. formats];

    public IReadOnlyList<ITraceFormat> Formats { get; }

    public IEnumerable<string> Names => Formats.Select(f => f.Name);

    /// <summary>The format of the file that starts with <paramref name="head"/>, or null when none claims it.</summary>
    public ITraceFormat? Detect(ReadOnlySpan<byte> head)
    {
        foreach (var format in Formats)
        {
            if (format.Matches(head)) return format;
        }

        return null;
    }

    /// <summary>Reads the first bytes of <paramref name="path"/> and returns the format that claims them.</summary>
    /// <exception cref="TraceFormatException">No registered format recognises the file.</exception>
    public ITraceFormat Detect(string path)
    {
        Span<byte> head = stackalloc byte[HeadLength];
        int n;
        using (var f = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, bufferSize: 1))
            n = f.ReadAtLeast(head, head.Length, throwOnEndOfStream: false);
        return Detect(head[..n])
            ?? throw new TraceFormatException(path, 0, $"not a trace TraceLab reads: {Expected()}");
    }

    /// <summary>Opens <paramref name="path"/> with the reader of the format its content shows.</summary>
    public IKernelTraceReader Open(string path, TraceReadOptions? options = null) =>
        Detect(path).Open(path, options ?? TraceReadOptions.Default);

    /// <summary>"expected NAME (SIGNATURE), ... or NAME (SIGNATURE)", from the registered formats.</summary>
    public string Expected()
    {
        var described = Formats.Select(f => $"{f.Name} ({f.Signature})").ToList();
        return described.Count switch
        {
            0 => "no trace formats are registered",
            1 => $"expected {described[0]}",
            _ => $"expected {string.Join(", ", described[..^1])} or {described[^1]}",
        };
    }
}
