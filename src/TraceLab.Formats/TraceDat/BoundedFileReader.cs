using System.Buffers.Binary;
using System.Text;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// Sequential little-endian reads of trace.dat metadata through a small window buffer. Every length is checked
/// against the bytes left in the file before anything is allocated, and running short names the file and offset.
/// A decompressed v7 section is read the same way from memory (<see cref="OverSection"/>).
/// </summary>
internal sealed class BoundedFileReader
{
    private readonly SafeFileHandle? _handle;
    private readonly byte[]? _memory;
    private readonly long _sectionOffset;
    private readonly byte[] _window = new byte[1 << 16];
    private long _windowStart;
    private int _windowLength;

    public BoundedFileReader(SafeFileHandle handle, string file)
    {
        _handle = handle;
        File = file;
        Length = RandomAccess.GetLength(handle);
    }

    private BoundedFileReader(byte[] memory, string file, long sectionOffset)
    {
        _memory = memory;
        File = file;
        Length = memory.Length;
        _sectionOffset = sectionOffset;
    }

    /// <summary>
    /// Reads the decompressed bytes of a section. Its errors name the file and the section's offset in it, and say
    /// where in the decompressed bytes the problem is.
    /// </summary>
    public static BoundedFileReader OverSection(byte[] decompressed, string file, long sectionOffset) =>
        new(decompressed, file, sectionOffset);

    public string File { get; }
    public long Length { get; }
    public long Position { get; private set; }
    public long Remaining => Length - Position;

    public void Seek(long position, string what)
    {
        if (position < 0 || position > Length)
            throw Fail($"{what} at an offset inside the file (0..{Length}), found {position}");
        Position = position;
    }

    public void Skip(long count, string what)
    {
        Require(count, what);
        Position += count;
    }

    public TraceFormatException Fail(string expected) => Error(Position, expected);

    /// <summary>An error at <paramref name="at"/> (a file offset, or an offset in the decompressed section).</summary>
    public TraceFormatException Error(long at, string expected)
    {
        // Names read from a corrupt file can hold line breaks; the error stays one line.
        expected =
            expected.Replace("\n", "\\n", StringComparison.Ordinal).Replace("\r", "\\r", StringComparison.Ordinal);
        return _memory is null
            ? new TraceFormatException(File, at, expected)
            : new TraceFormatException(File, _sectionOffset, $"(byte {at} of the decompressed section) {expected}");
    }

    public byte U8(string what) => Span(1, what)[0];

    public ushort U16(string what) => BinaryPrimitives.ReadUInt16LittleEndian(Span(2, what));

    public uint U32(string what) => BinaryPrimitives.ReadUInt32LittleEndian(Span(4, what));

    public ulong U64(string what) => BinaryPrimitives.ReadUInt64LittleEndian(Span(8, what));

    /// <summary>
    /// A length field, rejected when it claims more than the file holds or more than <paramref name="max"/>.
    /// </summary>
    public int Length32(string what, long max)
    {
        var at = Position;
        return (int)CheckLength(U32(what + " length"), what, max, at);
    }

    public int Length64(string what, long max)
    {
        var at = Position;
        return (int)CheckLength(U64(what + " length"), what, max, at);
    }

    public byte[] Bytes(int count, string what) => Span(count, what).ToArray();

    public string Text(int count, string what) => Encoding.UTF8.GetString(Span(count, what));

    /// <summary>A NUL-terminated string of at most <paramref name="max"/> bytes.</summary>
    public string CString(string what, int max = 4096)
    {
        var start = Position;
        var sb = new StringBuilder();
        while (true)
        {
            if (Position - start > max)
            {
                Position = start; throw Fail(
                $"a NUL-terminated {what} of at most {max} bytes");
            }
            var b = U8(what);
            if (b == 0) return sb.ToString();
            sb.Append((char)b);
        }
    }

    /// <summary>Expects the exact bytes of <paramref name="tag"/> followed by NUL.</summary>
    public void ExpectTag(string tag)
    {
        var start = Position;
        var got = CString($"'{tag}' tag", 64);
        if (got != tag) { Position = start; throw Fail($"'{tag}', found '{got}'"); }
    }

    private long CheckLength(ulong value, string what, long max, long at)
    {
        if (value > (ulong)Math.Min(max, Remaining))
            throw Error(at, $"a {what} length of at most {Math.Min(max, Remaining)} bytes, found {value}");
        return (long)value;
    }

    private void Require(long count, string what)
    {
        if (count < 0 || count > Remaining)
            throw Fail($"{count} bytes of {what}, but the file ends after {Math.Max(0, Remaining)} more");
    }

    private ReadOnlySpan<byte> Span(int count, string what)
    {
        Require(count, what);
        if (count > _window.Length)
        {
            var big = new byte[count];
            ReadExactly(Position, big);
            Position += count;
            return big;
        }

        if (Position < _windowStart || Position + count > _windowStart + _windowLength)
        {
            _windowStart = Position;
            _windowLength = (int)Math.Min(_window.Length, Length - Position);
            ReadExactly(_windowStart, _window.AsSpan(0, _windowLength));
        }

        var span = _window.AsSpan((int)(Position - _windowStart), count);
        Position += count;
        return span;
    }

    private void ReadExactly(long offset, Span<byte> buffer)
    {
        if (_memory is not null)
        {
            _memory.AsSpan((int)offset, buffer.Length).CopyTo(buffer);
            return;
        }

        var done = 0;
        while (done < buffer.Length)
        {
            var n = RandomAccess.Read(_handle!, buffer[done..], offset + done);
            if (n <= 0) throw Error(offset + done, $"{buffer.Length - done} more bytes, but the file ended");
            done += n;
        }
    }
}
