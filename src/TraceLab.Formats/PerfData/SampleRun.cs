using System.Buffers;
using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// A stretch of the data section whose events are already in time order (in practice one CPU's ring buffer within
/// one perf round), kept as a file range instead of decoded events: the scan notes where it starts and ends, and at
/// delivery a cursor walks it again with positional reads into one small buffer, stopping at each event. Events the
/// scan delivered as late (older than <see cref="LateLimit"/>, the delivered time when the run was scanned) and
/// records that are not events are stepped over the same way the scan stepped over them.
/// </summary>
internal sealed class SampleRun
{
    private const int HeaderBytes = 8;
    private byte[]? _buffer;
    private long _bufferFileOffset;
    private int _bufferLength;
    private long _pos;
    private int _rawStart, _rawLength;

    public SampleRun(long start, long lateLimit)
    {
        Start = _pos = start;
        LateLimit = lateLimit;
    }

    /// <summary>File offset of the run's first event record.</summary>
    public long Start { get; }
    /// <summary>File offset just past the run's last event record.</summary>
    public long End { get; set; }
    /// <summary>Events older than this were delivered as late during the scan and are not part of the run.</summary>
    public long LateLimit { get; }
    /// <summary>Scan: time of the run's newest event so far (an older one starts a new run).</summary>
    public long LastTime { get; set; }

    // The cursor's current event (after a true MoveNext).
    public long Time { get; private set; }
    public int Cpu { get; private set; }
    /// <summary>File offset of the current event's record: orders events of equal time as the file does.</summary>
    public long Offset { get; private set; }
    public ReadOnlySpan<byte> Raw => _buffer.AsSpan(_rawStart, _rawLength);
    public int BufferBytes => _buffer?.Length ?? 0;

    /// <summary>Takes a buffer of about <paramref name="bytes"/> (never more than the run needs) for the cursor.</summary>
    public void Attach(int bytes)
    {
        var size = (int)Math.Min(bytes, Math.Max(End - Start, HeaderBytes));
        _buffer = ArrayPool<byte>.Shared.Rent(size);
    }

    /// <summary>Moves to the run's next event; false (and the buffer is given back) at its end.</summary>
    /// <exception cref="TraceFormatException">The file no longer holds what the scan found there.</exception>
    public bool MoveNext(SafeFileHandle handle, string path, SampleFormat samples)
    {
        while (_pos < End)
        {
            var head = Bytes(handle, path, _pos, HeaderBytes);
            var type = BinaryPrimitives.ReadUInt32LittleEndian(head);
            long size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
            if (size < HeaderBytes) throw Changed(path);
            if (type == PerfRecordType.Auxtrace)
            {
                size += (long)BinaryPrimitives.ReadUInt64LittleEndian(Bytes(handle, path, _pos, 16)[8..]);
                _pos += size;
                continue;
            }

            var record = Bytes(handle, path, _pos, (int)size);
            var offset = _pos;
            _pos += size;
            if (type != PerfRecordType.Sample) continue;
            if (samples.Parse(record[HeaderBytes..], out var time, out var cpu, out var raw) != SampleParse.Event || time < LateLimit)
                continue;
            Time = time;
            Cpu = cpu;
            Offset = offset;
            _rawStart = (int)Unsafe.ByteOffset(ref MemoryMarshal.GetArrayDataReference(_buffer!), ref MemoryMarshal.GetReference(raw));
            _rawLength = raw.Length;
            return true;
        }

        Release();
        return false;
    }

    public void Release()
    {
        if (_buffer is null) return;
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = null;
    }

    /// <summary><paramref name="count"/> bytes of the file from <paramref name="at"/>, read into the buffer if not there.</summary>
    private ReadOnlySpan<byte> Bytes(SafeFileHandle handle, string path, long at, int count)
    {
        var inBuffer = at - _bufferFileOffset;
        if (inBuffer >= 0 && inBuffer + count <= _bufferLength) return _buffer.AsSpan((int)inBuffer, count);
        if (count > End - at) throw Changed(path);
        if (_buffer is null || count > _buffer.Length)
        {
            // A record larger than the buffer (up to 64 KiB by its u16 size): a larger buffer from here on.
            var old = _buffer;
            _buffer = ArrayPool<byte>.Shared.Rent(Math.Max(count, old?.Length ?? 0));
            if (old is not null) ArrayPool<byte>.Shared.Return(old);
        }

        var want = (int)Math.Min(_buffer.Length, End - at);
        var n = 0;
        while (n < count)
        {
            var got = RandomAccess.Read(handle, _buffer.AsSpan(n, want - n), at + n);
            if (got <= 0) throw Changed(path);
            n += got;
            if (n >= want) break;
        }

        _bufferFileOffset = at;
        _bufferLength = n;
        return _buffer.AsSpan(0, count);
    }

    private TraceFormatException Changed(string path) =>
        new(path, _pos, "the records read there before (the file changed while it was read)");
}
