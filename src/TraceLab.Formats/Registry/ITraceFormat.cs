using TraceLab.Core;

namespace TraceLab.Formats.Registry;

/// <summary>
/// One trace file format TraceLab reads: how to recognise a file by its first bytes and how to open it.
/// Formats are listed once, in <see cref="TraceFormats.All"/>; nothing else knows which formats exist.
/// </summary>
public interface ITraceFormat
{
    /// <summary>Short name users see in messages and help, e.g. "trace.dat".</summary>
    string Name { get; }

    /// <summary>What identifies the format, for the "not a trace" message, e.g. "magic PERFILE2".</summary>
    string Signature { get; }

    /// <summary>
    /// Whether a file starting with <paramref name="head"/> is in this format. <paramref name="head"/> holds the
    /// file's first <see cref="TraceFormatRegistry.HeadLength"/> bytes, or fewer when the file is shorter; it is
    /// attacker-controlled, so check lengths before reading.
    /// </summary>
    bool Matches(ReadOnlySpan<byte> head);

    /// <summary>Opens the file for reading; metadata is parsed here, events are streamed by Read.</summary>
    /// <exception cref="TraceFormatException">The file is truncated or corrupt.</exception>
    IKernelTraceReader Open(string path, TraceReadOptions options);
}
