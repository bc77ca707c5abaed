using System.Buffers.Binary;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// The data section as a sequence of records (perf_event_header: u32 type, u16 misc, u16 size), read through one
/// fixed buffer: memory stays constant whatever the file size, and a record is a span into that buffer.
/// </summary>
internal sealed class PerfRecordStream
{
    private const int HeaderBytes = 8;
    private readonly SafeFileHandle _handle;
    private readonly string _path;
    private readonly long _end;
    private readonly byte[] _buffer = new byte[1 << 20];
    private long _bufferFileOffset;
    private int _bufferLength;
    private int _pos;

    public PerfRecordStream(SafeFileHandle handle, string path, long offset, long size)
    {
        _handle = handle;
        _path = path;
        _bufferFileOffset = offset;
        _end = offset + size;
    }

    /// <summary>File offset of the current record.</summary>
    public long RecordOffset { get; private set; }
    public long End => _end;
    public uint Type { get; private set; }
    public ushort Misc { get; private set; }

    /// <summary>The current record after its 8-byte header (valid until the next <see cref="MoveNext"/>).</summary>
    public ReadOnlySpan<byte> Body => _buffer.AsSpan(_bodyStart, _bodyLength);

    private int _bodyStart, _bodyLength;

    /// <summary>Advances to the next record; false at the end of the data section.</summary>
    /// <exception cref="TraceFormatException">A record header is impossible or runs past the section.</exception>
    public bool MoveNext()
    {
        if (!Ensure(HeaderBytes))
        {
            var left = _end - (_bufferFileOffset + _pos);
            if (left == 0) return false;
            throw new TraceFormatException(_path, _bufferFileOffset + _pos, $"a record header (8 bytes), but the data section ends after {left}");
        }

        RecordOffset = _bufferFileOffset + _pos;
        var head = _buffer.AsSpan(_pos);
        Type = BinaryPrimitives.ReadUInt32LittleEndian(head);
        Misc = BinaryPrimitives.ReadUInt16LittleEndian(head[4..]);
        long size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
        if (size < HeaderBytes) throw new TraceFormatException(_path, RecordOffset, $"a record size of at least 8 bytes, found {size} (type {Type})");
        if (Type == PerfRecordType.Auxtrace)
        {
            // PERF_RECORD_AUXTRACE is followed by its AUX data, whose length is the record's first u64.
            if (!Ensure(16)) throw new TraceFormatException(_path, RecordOffset, "an AUXTRACE record of 16 bytes or more");
            size += (long)BinaryPrimitives.ReadUInt64LittleEndian(_buffer.AsSpan(_pos + 8));
            if (size > _end - RecordOffset) throw Past(size);
            Skip(size);
            _bodyStart = _bodyLength = 0;
            return true;
        }

        if (!Ensure((int)size)) throw Past(size);
        _bodyStart = _pos + HeaderBytes;
        _bodyLength = (int)size - HeaderBytes;
        _pos += (int)size;
        return true;
    }

    private TraceFormatException Past(long size) =>
        new(_path, RecordOffset, $"a record of {size} bytes (type {Type}) inside the data section ending at offset {_end}");

    private void Skip(long size)
    {
        var inBuffer = _bufferLength - _pos;
        if (size <= inBuffer) { _pos += (int)size; return; }
        _bufferFileOffset += _pos + size;
        _bufferLength = _pos = 0;
    }

    /// <summary>Makes <paramref name="count"/> bytes from the current position available; false if the section has fewer.</summary>
    private bool Ensure(int count)
    {
        if (_bufferLength - _pos >= count) return true;
        var keep = _bufferLength - _pos;
        Buffer.BlockCopy(_buffer, _pos, _buffer, 0, keep);
        _bufferFileOffset += _pos;
        _pos = 0;
        _bufferLength = keep;
        while (_bufferLength < count)
        {
            var want = (int)Math.Min(_buffer.Length - _bufferLength, _end - (_bufferFileOffset + _bufferLength));
            if (want <= 0) return false;
            var n = RandomAccess.Read(_handle, _buffer.AsSpan(_bufferLength, want), _bufferFileOffset + _bufferLength);
            if (n <= 0) return false;
            _bufferLength += n;
        }

        return true;
    }
}
