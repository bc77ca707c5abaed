using System.Buffers;

namespace TraceLab.Reporting;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> that hands what is written to a stream in chunks of one fixed buffer: a
/// <see cref="System.Text.Json.Utf8JsonWriter"/> on it never holds more than a chunk, however long the document.
/// </summary>
/// <remarks>
/// Why not the writer's own <see cref="Stream"/> overload: that one buffers everything written between two of its
/// flushes in an array it doubles as needed, and report.json's larger sections (a busy system's convoys and wakeups,
/// a line per thread) grew it to 2.2 MB inside one section — a few MB of large objects whose collection cost an
/// `analyze` a background gen-2 collection after the pass (docs/performance.md#report-json-chunks).
/// </remarks>
public sealed class StreamChunkWriter(Stream stream, int chunkBytes = StreamChunkWriter.DefaultChunkBytes)
    : IBufferWriter<byte>
{
    /// <summary>Below the large-object threshold (85,000 bytes), so the one buffer is an ordinary object.</summary>
    public const int DefaultChunkBytes = 64 * 1024;

    private byte[] _buffer = new byte[chunkBytes];
    private int _written;

    public void Advance(int count)
    {
        if ((uint)count > (uint)(_buffer.Length - _written)) throw new ArgumentOutOfRangeException(nameof(count));
        _written += count;
    }

    // Reserve first: it may replace the buffer (`_buffer.AsMemory(Reserve(…))` would read the old one).
    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        var start = Reserve(sizeHint);
        return _buffer.AsMemory(start);
    }

    public Span<byte> GetSpan(int sizeHint = 0)
    {
        var start = Reserve(sizeHint);
        return _buffer.AsSpan(start);
    }

    /// <summary>Writes what the buffer holds to the stream (and the stream's own buffer through).</summary>
    public void Flush()
    {
        WriteOut();
        stream.Flush();
    }

    /// <summary>Where the free space starts, with at least <paramref name="sizeHint"/> bytes (1 when 0) after it.
    /// </summary>
    private int Reserve(int sizeHint)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(sizeHint);
        var wanted = Math.Max(sizeHint, 1);
        if (_buffer.Length - _written >= wanted) return _written;
        WriteOut();
        // A value longer than a chunk (a very long string) gets a buffer of its size; the next chunks use it too.
        if (_buffer.Length < wanted) _buffer = new byte[wanted];
        return 0;
    }

    private void WriteOut()
    {
        if (_written == 0) return;
        stream.Write(_buffer, 0, _written);
        _written = 0;
    }
}
