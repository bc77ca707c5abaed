namespace TraceLab.Core;

/// <summary>
/// A trace file is truncated or corrupt. The message names the file, the offset and what was expected.
/// </summary>
public sealed class TraceFormatException : Exception
{
    public TraceFormatException(string file, long offset, string expected)
        : base($"{file}: at offset {offset}: {expected}")
    {
        File = file;
        Offset = offset;
    }

    public TraceFormatException(string message) : base(message) { }

    public TraceFormatException(string message, Exception inner) : base(message, inner) { }

    public TraceFormatException() { }

    public string? File { get; }
    public long Offset { get; }
}
