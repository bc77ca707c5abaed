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
/// delivery a cursor walks it again, stopping at each event. Events the scan delivered as late (older than
/// <see cref="LateLimit"/>, the delivered time when the run was scanned) and records that are not events are stepped
/// over the same way the scan stepped over them.
/// <para>
/// The cursor reads the records where the scan left them, in the <see cref="PerfRecordStream"/>'s window, as long as
/// the window keeps them (in real captures it does: the two rounds awaiting delivery are a few hundred KB to ~30 MB);
/// once <see cref="Detach"/>ed it reads them again from the file with positional reads into one small buffer.
/// </para>
/// </summary>
internal sealed class SampleRun
{
    private const int HeaderBytes = 8;
    private PerfRecordStream? _window;
    private byte[]? _buffer;
    private long _bufferFileOffset;
    private int _bufferLength;
    private long _pos;
    private long _rawAt;
    private int _rawLength;
    private bool _started;

    public SampleRun(long start, long lateLimit, PerfRecordStream? window)
    {
        Start = _pos = start;
        LateLimit = lateLimit;
        _window = window;
    }

    /// <summary>File offset of the run's first event record.</summary>
    public long Start { get; }
    /// <summary>File offset just past the run's last event record.</summary>
    public long End { get; set; }
    /// <summary>Events older than this were delivered as late during the scan and are not part of the run.</summary>
    public long LateLimit { get; }
    /// <summary>Scan: time of the run's newest event so far (an older one starts a new run).</summary>
    public long LastTime { get; set; }

    /// <summary>True while the cursor reads from the scan's window rather than from the file.</summary>
    public bool InWindow => _window is not null;

    /// <summary>The oldest file offset the cursor still reads: its current event's record, or where it resumes.</summary>
    public long Need => _started ? Offset : _pos;

    // The cursor's current event (after a true MoveNext).
    public long Time { get; private set; }
    public int Cpu { get; private set; }
    /// <summary>File offset of the current event's record: orders events of equal time as the file does.</summary>
    public long Offset { get; private set; }

    /// <summary>The current event's tracepoint payload (valid until the window or the cursor moves on).</summary>
    public ReadOnlySpan<byte> Raw => _window is { } w
        ? w.Window.Slice((int)(_rawAt - w.BufferFileOffset), _rawLength)
        : _buffer.AsSpan((int)(_rawAt - _bufferFileOffset), _rawLength);

    public int BufferBytes => _buffer?.Length ?? 0;

    /// <summary>From now on the cursor reads from the file, into a buffer of about <paramref name="bytes"/>.</summary>
    /// <exception cref="TraceFormatException">The file no longer holds what the scan found there.</exception>
    public void Detach(int bytes, SafeFileHandle handle, string path, SampleFormat samples)
    {
        if (_window is null) return;
        _window = null;
        if (!_started) return;
        // Read the current event again, from the file.
        _pos = Offset;
        _started = false;
        Attach(bytes);
        if (!MoveNext(handle, path, samples)) throw Changed(path);
    }

    /// <summary>A detached cursor takes a buffer of about <paramref name="bytes"/> (never more than the run needs).</summary>
    public void Attach(int bytes)
    {
        if (_window is not null || _buffer is not null) return;
        var size = (int)Math.Min(bytes, Math.Max(End - _pos, HeaderBytes));
        _buffer = ArrayPool<byte>.Shared.Rent(size);
        _bufferLength = 0;
    }

    /// <summary>Moves to the run's next event; false (and the buffer is given back) at its end.</summary>
    /// <exception cref="TraceFormatException">The file no longer holds what the scan found there.</exception>
    public bool MoveNext(SafeFileHandle handle, string path, SampleFormat samples)
    {
        if (_window is { } w) return WindowNext(w, samples);
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
            Current(time, cpu, offset, _bufferFileOffset + ByteOffset(_buffer, raw), raw.Length);
            return true;
        }

        Release();
        return false;
    }

    /// <summary>
    /// The window holds every record from <see cref="Need"/> to the scan (it asks before dropping any), and the scan
    /// checked them all, so here only the steps are repeated.
    /// </summary>
    private bool WindowNext(PerfRecordStream w, SampleFormat samples)
    {
        var buffer = w.Window;
        var origin = w.BufferFileOffset;
        while (_pos < End)
        {
            var at = (int)(_pos - origin);
            var head = buffer.Slice(at, HeaderBytes);
            var type = BinaryPrimitives.ReadUInt32LittleEndian(head);
            int size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
            if (type == PerfRecordType.Auxtrace)
            {
                // Inside the window: the scan found its AUX data there too (else the window had detached this run).
                _pos += size + (long)BinaryPrimitives.ReadUInt64LittleEndian(buffer.Slice(at + 8, 8));
                continue;
            }

            var offset = _pos;
            _pos += size;
            if (type != PerfRecordType.Sample) continue;
            var body = buffer.Slice(at + HeaderBytes, size - HeaderBytes);
            if (samples.Parse(body, out var time, out var cpu, out var raw) != SampleParse.Event || time < LateLimit)
                continue;
            Current(time, cpu, offset, origin + ByteOffset(buffer, raw), raw.Length);
            return true;
        }

        _started = false;
        return false;
    }

    private void Current(long time, int cpu, long offset, long rawAt, int rawLength)
    {
        Time = time;
        Cpu = cpu;
        Offset = offset;
        _rawAt = rawAt;
        _rawLength = rawLength;
        _started = true;
    }

    private static long ByteOffset(ReadOnlySpan<byte> buffer, ReadOnlySpan<byte> inside) =>
        (long)Unsafe.ByteOffset(ref MemoryMarshal.GetReference(buffer), ref MemoryMarshal.GetReference(inside));

    public void Release()
    {
        _started = false;
        if (_buffer is null) return;
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = null;
    }

    /// <summary><paramref name="count"/> bytes of the file from <paramref name="at"/>, read into the buffer if not there.</summary>
    private ReadOnlySpan<byte> Bytes(SafeFileHandle handle, string path, long at, int count)
    {
        var inBuffer = at - _bufferFileOffset;
        if (_buffer is not null && inBuffer >= 0 && inBuffer + count <= _bufferLength) return _buffer.AsSpan((int)inBuffer, count);
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
