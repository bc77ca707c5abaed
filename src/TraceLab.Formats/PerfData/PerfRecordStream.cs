using System.Buffers.Binary;
using System.IO.MemoryMappedFiles;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// The data section as a sequence of records (perf_event_header: u32 type, u16 misc, u16 size), seen through one
/// window of the file read into a buffer that every move reuses: a record is a span into it. Only the window is held,
/// so the memory the process has resident stays constant whatever the file size. (The window was a slice of a mapping
/// of the section until reading proved cheaper than its page faults: docs/performance.md#read-window.)
/// <para>
/// The window also serves the records scanned earlier that the merge still has to deliver (<see cref="SampleRun"/>s
/// read them from here instead of from the file again): when the scan reaches the window's end the window moves on
/// from the oldest offset its <see cref="IWindowKeeper"/> still needs, up to half the window back; runs needing older
/// bytes are told to read them from the file themselves.
/// </para>
/// </summary>
internal sealed unsafe class PerfRecordStream : IDisposable
{
    private const int HeaderBytes = 8;
    /// <summary>
    /// Window size: holds the records of the two rounds awaiting delivery in captures with frequent rounds (a
    /// perf record -a of lock syscalls: ~100 KB a round; all but ~40 of its 4,720 runs stay in the window). Files
    /// with rounds of tens of MB read most runs again from the file, as without the window; a larger window would cost
    /// its size in resident pages for them (32 MiB: 97 MiB peak RSS against 81 MiB for the 2 GB perf.data of
    /// docs/performance.md, for 2 % more speed; 8 MiB: 5-10 % slower).
    /// </summary>
    public const int DefaultWindowBytes = 16 * 1024 * 1024;
    /// <summary>Smallest window: two records of the largest size (u16) fit in half of it.</summary>
    public const int MinWindowBytes = 256 * 1024;

    /// <summary>
    /// Bytes read at a time into the window's buffer: the scan goes on as soon as a step is read, and the buffer's
    /// pages are first written a step at a time. Read whole, the first 16 MiB (new memory, ~4,000 page faults or 8
    /// huge pages) kept the first event from the analysis thread: 100 ms of a cold run where the huge pages came back
    /// from the host (docs/performance.md#window-steps).
    /// </summary>
    public const int DefaultFillStepBytes = 1024 * 1024;

    private readonly SafeFileHandle _handle;
    private readonly string _path;
    private readonly long _end;
    /// <summary>
    /// Where the data ends in fact: a header may claim more than the file holds (then the data is cut short).
    /// </summary>
    private readonly long _available;
    private readonly int _windowBytes;
    private readonly int _fillStepBytes;
    private MemoryMappedFile? _file;
    /// <summary>Where the data section starts in the file.</summary>
    private readonly long _start;
    /// <summary>
    /// The window's bytes, read from the file: reading costs less than the page faults of a mapping and the giving
    /// back of its pages as the window slides (docs/performance.md#read-window).
    /// </summary>
    private ReadBuffer? _read;
    private byte* _base;
    private long _bufferFileOffset;
    private int _bufferLength;
    private int _pos;
    private int _bodyStart, _bodyLength;
    /// <summary>
    /// perf record -z: the records come decompressed from here (offsets are then logical, see <see cref="Fail"/>).
    /// </summary>
    private readonly InflatedRecords? _inflated;
    private readonly Func<long> _keepFrom;

    public PerfRecordStream(SafeFileHandle handle, string path, long offset, long size,
        int windowBytes = DefaultWindowBytes, int fillStepBytes = DefaultFillStepBytes)
    {
        _fillStepBytes = Math.Max(1, fillStepBytes);
        _handle = handle;
        _path = path;
        _start = _bufferFileOffset = offset;
        _end = offset + size;
        _available = Math.Min(_end, RandomAccess.GetLength(handle));
        _windowBytes = Math.Max(windowBytes, MinWindowBytes);
        _keepFrom = () => Keeper?.KeepFrom(long.MinValue) ?? long.MaxValue;
    }

    /// <summary>
    /// The records of a compressed data section (perf record -z), decompressed: read from a file-backed stream of
    /// the records as written, through <see cref="InflatedRecords"/>. Records awaiting delivery stay in its buffer
    /// (nothing is read twice from the file: the compressed stream cannot be entered in the middle).
    /// </summary>
    public PerfRecordStream(SafeFileHandle handle, string path, long offset, long size, PerfCompression compression,
        int windowBytes = DefaultWindowBytes, int fillStepBytes = DefaultFillStepBytes)
        : this(handle, path, offset, size, windowBytes, fillStepBytes)
    {
        var written = new PerfRecordStream(handle, path, offset, size, windowBytes, fillStepBytes);
        _inflated = new InflatedRecords(written, path, compression);
        _bufferFileOffset = 0;
    }

    /// <summary>Bytes of a record the compressed data ended inside (perf leaves them unread too); 0 normally.</summary>
    public int IncompleteTailBytes { get; private set; }

    /// <summary>The decompressing source, when the data section is compressed.</summary>
    public InflatedRecords? Inflated => _inflated;

    /// <summary>
    /// The events held in the decompression buffer grew large: the merge should deliver older ones now.
    /// </summary>
    public bool Pressure
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _inflated is { Pressure: true };
    }

    /// <summary>
    /// A damage report for the record at <paramref name="offset"/> (a file offset, or a logical one when
    /// decompressing).
    /// </summary>
    public TraceFormatException Fail(long offset, string expected) =>
        _inflated is { } inflated ? inflated.Fail(offset, expected) : new TraceFormatException(_path, offset, expected);

    /// <summary>
    /// The file offset of <paramref name="offset"/> (the COMPRESSED record it came from, when decompressing).
    /// </summary>
    public long FileOffsetOf(long offset) => _inflated?.FileOffsetOf(offset) ?? offset;

    /// <summary>Who keeps earlier records in the window (the merge); null keeps nothing behind the scan.</summary>
    public IWindowKeeper? Keeper { get; set; }

    /// <summary>
    /// The window's bytes; <see cref="BufferFileOffset"/> is the file offset of its first byte. Changes when the scan
    /// moves on.
    /// </summary>
    public ReadOnlySpan<byte> Window => new(_base, _bufferLength);

    public long BufferFileOffset => _bufferFileOffset;

    /// <summary>Bytes of the file in the window at once, at most.</summary>
    public int WindowBytes => _windowBytes;

    /// <summary>File offset of the current record.</summary>
    public long RecordOffset { get; private set; }
    public long End => _end;
    public string Path => _path;
    public uint Type { get; private set; }
    public ushort Misc { get; private set; }

    /// <summary>The current record after its 8-byte header (valid until the next <see cref="MoveNext"/>).</summary>
    public ReadOnlySpan<byte> Body => new(_base + _bodyStart, _bodyLength);

    /// <summary>
    /// The window from the next record on: a caller may walk the whole records in it itself (the scan's loop over
    /// samples) and then <see cref="Skip"/> them; <see cref="MoveNext"/> handles the rest (window ends, checks).
    /// </summary>
    public ReadOnlySpan<byte> Ahead => new(_base + _pos, _bufferLength - _pos);

    /// <summary>File offset of <see cref="Ahead"/>'s first byte.</summary>
    public long AheadOffset => _bufferFileOffset + _pos;

    /// <summary>The caller has walked <paramref name="bytes"/> of whole records from <see cref="Ahead"/>.</summary>
    public void Skip(int bytes) => _pos += bytes;

    /// <summary>Advances to the next record; false at the end of the data section.</summary>
    /// <exception cref="TraceFormatException">A record header is impossible or runs past the section.</exception>
    public bool MoveNext()
    {
        if (_inflated is not null) return InflatedNext(_inflated);
        if (_bufferLength - _pos < HeaderBytes && !Ensure(HeaderBytes))
        {
            var left = _end - (_bufferFileOffset + _pos);
            if (left == 0) return false;
            throw new TraceFormatException(
                _path, _bufferFileOffset + _pos, $"a record header (8 bytes), but the data section ends after {left}");
        }

        RecordOffset = _bufferFileOffset + _pos;
        var head = new ReadOnlySpan<byte>(_base + _pos, HeaderBytes);
        Type = BinaryPrimitives.ReadUInt32LittleEndian(head);
        Misc = BinaryPrimitives.ReadUInt16LittleEndian(head[4..]);
        int size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
        if (size < HeaderBytes) throw new TraceFormatException(
            _path, RecordOffset, $"a record size of at least 8 bytes, found {size} (type {Type})");
        if (Type == PerfRecordType.Auxtrace) return Auxtrace(size);
        if (_bufferLength - _pos < size && !Ensure(size)) throw Past(size);
        _bodyStart = _pos + HeaderBytes;
        _bodyLength = size - HeaderBytes;
        _pos += size;
        return true;
    }

    private bool InflatedNext(InflatedRecords inflated)
    {
        var at = _bufferFileOffset + _pos;
        var whole = inflated.Record(at, _keepFrom, out var left);
        _base = inflated.Base;
        _bufferFileOffset = inflated.Origin;
        _bufferLength = inflated.Length;
        _pos = (int)(at - _bufferFileOffset);
        if (!whole)
        {
            // perf record can end its compressed stream inside a record (seen with --switch-events -a); perf's reader
            // keeps such a tail for a COMPRESSED record that never comes and ignores it. So does this reader, saying
            // so.
            IncompleteTailBytes = left;
            return false;
        }

        RecordOffset = at;
        var head = new ReadOnlySpan<byte>(_base + _pos, HeaderBytes);
        Type = BinaryPrimitives.ReadUInt32LittleEndian(head);
        Misc = BinaryPrimitives.ReadUInt16LittleEndian(head[4..]);
        int size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
        if (size < HeaderBytes)
            throw inflated.Fail(at, $"a record size of at least 8 bytes, found {size} (type {Type})");
        // AUX data is written beside the compressed records, never inside them.
        if (Type == PerfRecordType.Auxtrace || PerfRecordType.IsCompressed(Type))
            throw inflated.Fail(at, $"a record that can be inside compressed data, found type {Type}");
        _bodyStart = _pos + HeaderBytes;
        _bodyLength = size - HeaderBytes;
        _pos += size;
        return true;
    }

    /// <summary>PERF_RECORD_AUXTRACE is followed by its AUX data, whose length is the record's first u64.</summary>
    private bool Auxtrace(long size)
    {
        if (!Ensure(16)) throw new TraceFormatException(_path, RecordOffset, "an AUXTRACE record of 16 bytes or more");
        var aux = BinaryPrimitives.ReadUInt64LittleEndian(new ReadOnlySpan<byte>(_base + _pos + 8, 8));
        // Compared unsigned: a length of 2^63 or more would turn negative as a long and move the scan backwards.
        if (size > _end - RecordOffset || aux > (ulong)(_end - RecordOffset - size)) throw Past(size);
        size += (long)aux;
        var inBuffer = _bufferLength - _pos;
        if (size <= inBuffer)
        {
            _pos += (int)size;
        }
        else
        {
            // The window jumps past data it never holds: nothing before the jump can be kept in it.
            Keeper?.DetachAll();
            DropWindow();
            _bufferFileOffset += _pos + size;
            _bufferLength = _pos = 0;
        }

        _bodyStart = _bodyLength = 0;
        return true;
    }

    private TraceFormatException Past(long size) =>
        new(_path, RecordOffset,
            $"a record of {size} bytes (type {Type}) inside the data section ending at offset {_end}");

    /// <summary>
    /// Makes <paramref name="count"/> bytes from the current position available; false if the section has fewer.
    /// </summary>
    private bool Ensure(int count)
    {
        if (_bufferLength - _pos >= count) return true;
        var scan = _bufferFileOffset + _pos;
        if (_available - scan < count) return false;
        var past = count - (_bufferLength - _pos);
        if (_read is not null && _base is not null && past <= _read.Length - _bufferLength)
        {
            // Room after the window in its buffer: read on into it; nothing moves, so every run keeps its bytes.
            ReadOn(past);
            return true;
        }

        // Keep from the oldest byte still needed (the scan's position or a held run's), at most half the window
        // back, so each new window reaches at least half a window past the scan.
        var floor = Math.Max(_bufferFileOffset, scan - _windowBytes / 2);
        var keep = Math.Min(scan, Keeper?.KeepFrom(floor) ?? long.MaxValue);
        Map(keep, (int)Math.Min(_windowBytes, _available - keep), (int)(scan - keep) + count);
        _pos = (int)(scan - keep);
        return true;
    }

    /// <summary>
    /// Reads at least <paramref name="need"/> bytes past the window's end into the room after it (a step, or to the
    /// buffer's or the data's end).
    /// </summary>
    private void ReadOn(int need)
    {
        var next = _bufferFileOffset + _bufferLength;
        var length = (int)Math.Min(Math.Min(_read!.Length - _bufferLength, _available - next),
            Math.Max(need, _fillStepBytes));
        Fill(_read.Pointer + _bufferLength, next, length);
        _bufferLength += length;
    }

    /// <summary>Reads [<paramref name="offset"/>, +<paramref name="length"/>) of the file to <paramref name="to"/>.
    /// </summary>
    private void Fill(byte* to, long offset, int length)
    {
        var filled = 0;
        while (filled < length)
        {
            var n = RandomAccess.Read(_handle, new Span<byte>(to + filled, length - filled), offset + filled);
            // The file grew shorter while it was read: what a mapping would have met as a fault.
            if (n <= 0) throw new TraceFormatException(_path, offset + filled,
                $"{length - filled} more bytes of the data section, but the file ends there (did it change?)");
            filled += n;
        }

        BytesRead += length;
    }

    /// <summary>Bytes read from the file into the window so far.</summary>
    public long BytesRead { get; private set; }

    /// <summary>The file's mapping, which the detached run cursors take their views of.</summary>
    public MemoryMappedFile Mapping =>
        _file ??= MemoryMappedFile.CreateFromFile(
            _handle, null, 0, MemoryMappedFileAccess.Read, HandleInheritability.None, leaveOpen: true);

    /// <summary>
    /// Moves the window to start at <paramref name="offset"/>, at most <paramref name="length"/> bytes long: the bytes
    /// it keeps from the window before (from <paramref name="offset"/> on: it only moves forward) are moved to the
    /// buffer's start, and the file after them is read up to <paramref name="need"/> bytes from the start or a step
    /// past what was kept, whichever is more (<see cref="ReadOn"/> reads the rest as the scan gets there).
    /// </summary>
    private void Map(long offset, int length, int need)
    {
        _read ??= ReadBuffer.Rent((int)Math.Min(_windowBytes, Math.Max(_available - _start, MinWindowBytes)));
        var buffer = _read.Pointer;
        var kept = 0;
        if (_base is not null && offset >= _bufferFileOffset && offset < _bufferFileOffset + _bufferLength)
        {
            kept = (int)Math.Min(length, _bufferFileOffset + _bufferLength - offset);
            Buffer.MemoryCopy(_base + (offset - _bufferFileOffset), buffer, _read.Length, kept);
        }
        length = Math.Max(kept, Math.Min(length, Math.Max(need, kept + _fillStepBytes)));
        Fill(buffer + kept, offset + kept, length - kept);
        _base = buffer;
        _bufferFileOffset = offset;
        _bufferLength = length;
        _bodyStart = _bodyLength = 0;
    }

    /// <summary>Nothing in the window is needed any more: the next move keeps none of it.</summary>
    private void DropWindow() => _base = null;

    /// <summary>The same as <see cref="Release"/>: the owner's way to say the stream is done.</summary>
    public void Dispose() => Release();

    /// <summary>Unmaps the window; the stream and the runs reading from it are done.</summary>
    public void Release()
    {
        if (_inflated is not null)
        {
            _inflated.Dispose();
            _base = null;
        }

        DropWindow();
        _read?.Dispose();
        _read = null;
        _bufferLength = _pos = 0;
        _file?.Dispose();
        _file = null;
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
