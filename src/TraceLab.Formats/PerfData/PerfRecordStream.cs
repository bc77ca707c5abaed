using System.Buffers;
using System.Buffers.Binary;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// The data section as a sequence of records (perf_event_header: u32 type, u16 misc, u16 size), read through one
/// fixed window buffer: memory stays constant whatever the file size, and a record is a span into that window.
/// <para>
/// The window also serves the records scanned earlier that the merge still has to deliver (<see cref="SampleRun"/>s
/// read them from here instead of from the file again): when it must make room it keeps the bytes from the oldest
/// offset its <see cref="IWindowKeeper"/> still needs, up to half the window; runs needing older bytes are told to
/// read them from the file themselves. Data is read in small chunks so the scan finds it in the CPU cache.
/// </para>
/// </summary>
internal sealed class PerfRecordStream
{
    private const int HeaderBytes = 8;
    /// <summary>Read size: small enough that what was just copied from the page cache is still in the CPU cache when scanned.</summary>
    private const int ReadChunkBytes = 256 * 1024;
    /// <summary>
    /// Window size: holds the records of the two rounds awaiting delivery in captures with frequent rounds (a
    /// perf record -a of lock syscalls: ~100 KB a round; all but 40 of its 4,720 runs stay in a 4 MiB window). Files
    /// with rounds of tens of MB read most runs again from the file, as without the window; a larger window would cost
    /// its size in RSS for them.
    /// </summary>
    public const int DefaultWindowBytes = 4 * 1024 * 1024;
    /// <summary>Smallest window: two records of the largest size (u16) fit in half of it.</summary>
    public const int MinWindowBytes = 256 * 1024;

    private readonly SafeFileHandle _handle;
    private readonly string _path;
    private readonly long _end;
    private byte[] _buffer;
    private long _bufferFileOffset;
    private int _bufferLength;
    private int _pos;
    private int _bodyStart, _bodyLength;

    public PerfRecordStream(SafeFileHandle handle, string path, long offset, long size, int windowBytes = DefaultWindowBytes)
    {
        _handle = handle;
        _path = path;
        _bufferFileOffset = offset;
        _end = offset + size;
        // A small file needs no more than itself (plus a chunk) in the window.
        var bytes = (int)Math.Clamp(Math.Min(windowBytes, size + ReadChunkBytes), MinWindowBytes, Math.Max(windowBytes, MinWindowBytes));
        // Pooled: a reader per file, and runs of the bench read several files, would otherwise leave one window
        // each on the large object heap until a full GC.
        _buffer = ArrayPool<byte>.Shared.Rent(bytes);
    }

    /// <summary>Gives the window back; the stream and the runs reading from it are done.</summary>
    public void Release()
    {
        var buffer = _buffer;
        _buffer = [];
        _bufferLength = _pos = 0;
        if (buffer.Length > 0) ArrayPool<byte>.Shared.Return(buffer);
    }

    /// <summary>Who keeps earlier records in the window (the merge); null keeps nothing behind the scan.</summary>
    public IWindowKeeper? Keeper { get; set; }

    /// <summary>The window's bytes; <see cref="BufferFileOffset"/> is the file offset of its first byte. Changes when the scan moves on.</summary>
    public byte[] Buffer => _buffer;

    public long BufferFileOffset => _bufferFileOffset;

    /// <summary>File offset of the current record.</summary>
    public long RecordOffset { get; private set; }
    public long End => _end;
    public uint Type { get; private set; }
    public ushort Misc { get; private set; }

    /// <summary>The current record after its 8-byte header (valid until the next <see cref="MoveNext"/>).</summary>
    public ReadOnlySpan<byte> Body => _buffer.AsSpan(_bodyStart, _bodyLength);

    /// <summary>Window offset of the current record's body.</summary>
    public int BodyStart => _bodyStart;

    /// <summary>Advances to the next record; false at the end of the data section.</summary>
    /// <exception cref="TraceFormatException">A record header is impossible or runs past the section.</exception>
    public bool MoveNext()
    {
        if (_bufferLength - _pos < HeaderBytes && !Ensure(HeaderBytes))
        {
            var left = _end - (_bufferFileOffset + _pos);
            if (left == 0) return false;
            throw new TraceFormatException(_path, _bufferFileOffset + _pos, $"a record header (8 bytes), but the data section ends after {left}");
        }

        RecordOffset = _bufferFileOffset + _pos;
        var head = _buffer.AsSpan(_pos, HeaderBytes);
        Type = BinaryPrimitives.ReadUInt32LittleEndian(head);
        Misc = BinaryPrimitives.ReadUInt16LittleEndian(head[4..]);
        int size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
        if (size < HeaderBytes) throw new TraceFormatException(_path, RecordOffset, $"a record size of at least 8 bytes, found {size} (type {Type})");
        if (Type == PerfRecordType.Auxtrace) return Auxtrace(size);
        if (_bufferLength - _pos < size && !Ensure(size)) throw Past(size);
        _bodyStart = _pos + HeaderBytes;
        _bodyLength = size - HeaderBytes;
        _pos += size;
        return true;
    }

    /// <summary>PERF_RECORD_AUXTRACE is followed by its AUX data, whose length is the record's first u64.</summary>
    private bool Auxtrace(long size)
    {
        if (!Ensure(16)) throw new TraceFormatException(_path, RecordOffset, "an AUXTRACE record of 16 bytes or more");
        size += (long)BinaryPrimitives.ReadUInt64LittleEndian(_buffer.AsSpan(_pos + 8));
        if (size > _end - RecordOffset) throw Past(size);
        var inBuffer = _bufferLength - _pos;
        if (size <= inBuffer)
        {
            _pos += (int)size;
        }
        else
        {
            // The window jumps past data it never holds: nothing before the jump can be kept in it.
            Keeper?.DetachAll();
            _bufferFileOffset += _pos + size;
            _bufferLength = _pos = 0;
        }

        _bodyStart = _bodyLength = 0;
        return true;
    }

    private TraceFormatException Past(long size) =>
        new(_path, RecordOffset, $"a record of {size} bytes (type {Type}) inside the data section ending at offset {_end}");

    /// <summary>Makes <paramref name="count"/> bytes from the current position available; false if the section has fewer.</summary>
    private bool Ensure(int count)
    {
        while (_bufferLength - _pos < count)
        {
            if (_bufferLength == _buffer.Length) Compact();
            var fileEnd = _bufferFileOffset + _bufferLength;
            var want = (int)Math.Min(Math.Min(_buffer.Length - _bufferLength, ReadChunkBytes), _end - fileEnd);
            if (want <= 0) return false;
            var n = RandomAccess.Read(_handle, _buffer.AsSpan(_bufferLength, want), fileEnd);
            if (n <= 0) return false;
            _bufferLength += n;
        }

        return true;
    }

    /// <summary>
    /// Makes room: keeps from the oldest byte still needed (the scan's position or a held run's), at most half the
    /// window back, so each compaction frees at least half the window and moves at most half of it.
    /// </summary>
    private void Compact()
    {
        var scan = _bufferFileOffset + _pos;
        var floor = Math.Max(_bufferFileOffset, scan - _buffer.Length / 2);
        var keep = Math.Min(scan, Keeper?.KeepFrom(floor) ?? long.MaxValue);
        var from = (int)(keep - _bufferFileOffset);
        var length = _bufferLength - from;
        System.Buffer.BlockCopy(_buffer, from, _buffer, 0, length);
        _bufferFileOffset = keep;
        _bufferLength = length;
        _pos -= from;
        _bodyStart = _bodyLength = 0;
    }
}

/// <summary>What the window asks the holder of earlier records (the merge) when it makes room.</summary>
internal interface IWindowKeeper
{
    /// <summary>
    /// The oldest file offset still needed in the window, at least <paramref name="floor"/> (long.MaxValue: none);
    /// whoever needs bytes before the floor reads them from the file from now on.
    /// </summary>
    long KeepFrom(long floor);

    /// <summary>The window is about to drop everything: every held run reads from the file from now on.</summary>
    void DetachAll();
}
