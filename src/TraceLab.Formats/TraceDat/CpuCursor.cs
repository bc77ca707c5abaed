using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// Walks one CPU's pages sequentially through a window of whole pages (<see cref="TraceDatData"/>: mapped from the
/// file, or read into a buffer), so memory stays bounded whatever the trace length. After <see cref="MoveNext"/>
/// returns true, <see cref="Timestamp"/> and <see cref="Payload"/> describe the current event. Compressed v7 data
/// comes a decompressed chunk at a time from a <see cref="CompressedCpuStream"/> instead; timestamps then pass
/// through the file's <see cref="TimestampConversion"/> when it has one.
/// </summary>
internal sealed unsafe class CpuCursor : IDisposable
{
    private readonly TraceDatData _data;
    private readonly string _file;
    private readonly HeaderPageLayout _layout;
    private readonly int _pageSize;
    private readonly int _windowBytes;
    private readonly CompressedCpuStream? _stream;
    private readonly TimestampConversion? _time;
    private TraceDatData.Window? _window;
    private byte* _base;
    private long _nextRead;
    private long _chunkOffset;
    private int _chunkLength;
    private int _pageStart;
    private int _pageLength;
    private RingBufferPageState _state;
    private int _payloadStart;
    private int _payloadLength;

    /// <param name="stream">
    /// The decompressing source of a compressed range (then <paramref name="data"/> is unused).
    /// </param>
    /// <param name="time">Raw-to-reported timestamp conversion; null when the file needs none.</param>
    public CpuCursor(TraceDatData data, string file, HeaderPageLayout layout, CpuDataRange range,
        CompressedCpuStream? stream = null, TimestampConversion? time = null)
    {
        _stream = stream;
        _time = time;
        _data = data;
        _file = file;
        _layout = layout;
        _pageSize = layout.PageSize;
        Cpu = range.Cpu;
        Buffer = range.Buffer;
        End = range.Offset + range.Size;
        _nextRead = range.Offset;
        var windowPages = Math.Max(1, data.WindowBytes / _pageSize);
        _windowBytes = (int)Math.Min(range.Size, (long)_pageSize * windowPages);
        // Nothing loaded yet: the first MoveNext loads the first window.
        _pageStart = 0;
        _pageLength = 0;
    }

    public int Cpu { get; }
    /// <summary>Instance buffer name ("" = top level).</summary>
    public string Buffer { get; }
    /// <summary>File offset just past this CPU's data.</summary>
    public long End { get; }
    public long Timestamp { get; private set; }
    public long PagesWithMissedEvents { get; private set; }

    public ReadOnlySpan<byte> Payload => new(_base + _payloadStart, _payloadLength);

    /// <summary>File offset of the current payload (of its compressed chunk), for error messages.</summary>
    public long PayloadFileOffset => ErrorOffset(_payloadStart);

    /// <summary>
    /// The common step, small enough to inline into the reader's delivery loop: the next record of the current page
    /// when it is a plain data record (type_len 1..28) lying wholly inside the committed data. Everything else (time
    /// extends, absolute stamps, padding, long records, the page end, damage) returns false without moving, and
    /// <see cref="MoveNext"/> then takes it with the full checks. Never throws.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryMoveNextPlain()
    {
        var pos = _state.Position;
        var left = _state.End - pos;
        if (left < 4) return false;
        // In bounds: the committed data (End) lies inside the page, the page inside the window.
        var word = BinaryPrimitives.ReadUInt32LittleEndian(new ReadOnlySpan<byte>(_base + _pageStart + pos, 4));
        var typeLen = (int)(word & 0x1F);
        var total = 4 + (typeLen * 4);
        // type_len 0 and 29..31 are the special records; (uint)(typeLen - 1) < 28 keeps 1..28.
        if ((uint)(typeLen - 1) >= 28 || total > left) return false;
        var ts = _state.Timestamp + (word >> 5);
        _state.Timestamp = ts;
        _state.Position = pos + total;
        _payloadStart = _pageStart + pos + 4;
        _payloadLength = total - 4;
        Timestamp = _time is null ? (long)ts : _time.Convert(ts, Cpu);
        return true;
    }

    public bool MoveNext()
    {
        while (true)
        {
            if (_pageLength > 0)
            {
                var page = new ReadOnlySpan<byte>(_base + _pageStart, _pageLength);
                if (RingBufferPageReader.TryReadRecord(page, ref _state, out var start, out var length, _file,
                    ErrorOffset(_pageStart)))
                {
                    _payloadStart = _pageStart + start;
                    _payloadLength = length;
                    Timestamp = _time is null ? (long)_state.Timestamp : _time.Convert(_state.Timestamp, Cpu);
                    return true;
                }
            }

            if (!NextPage()) return false;
        }
    }

    /// <summary>Releases the current window (a mapped view stays resident until unmapped).</summary>
    public void Dispose()
    {
        _stream?.Dispose();
        _window?.Dispose();
        _window = null;
        _base = null;
        _pageLength = 0;
    }

    private bool NextPage()
    {
        var next = _pageStart + _pageLength;
        if (_pageLength == 0 || next >= _chunkLength)
        {
            if (!LoadChunk()) return false;
            next = 0;
        }

        _pageStart = next;
        _pageLength = Math.Min(_pageSize, _chunkLength - next);
        var header = RingBufferPageReader.ReadHeader(new ReadOnlySpan<byte>(_base + _pageStart, _pageLength), _layout,
            _file, ErrorOffset(_pageStart));
        if (header.MissedEvents) PagesWithMissedEvents++;
        _state = header.InitialState;
        return true;
    }

    /// <summary>
    /// The file offset an error at <paramref name="inChunk"/> points at: inside the file's pages, or the compressed
    /// chunk holding them (a decompressed byte has no file offset of its own).
    /// </summary>
    private long ErrorOffset(int inChunk) => _stream is null ? _chunkOffset + inChunk : _chunkOffset;

    private bool LoadChunk()
    {
        if (_stream is not null) return LoadCompressedChunk();
        if (_nextRead >= End) return false;
        var want = (int)Math.Min(_windowBytes, End - _nextRead);
        var previous = _window;
        _window = null;
        _base = null;
        _pageLength = 0;
        _window = _data.Load(previous, _nextRead, want, Cpu, End);
        _base = _window.Pointer;
        _chunkOffset = _nextRead;
        _chunkLength = want;
        _nextRead += want;
        return true;
    }

    private bool LoadCompressedChunk()
    {
        _pageLength = 0;
        if (!_stream!.TryNext(out var data, out var length)) return false;
        _base = data;
        _chunkOffset = _stream.ChunkOffset;
        _chunkLength = length;
        return true;
    }
}
