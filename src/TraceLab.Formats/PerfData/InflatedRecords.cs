using System.Buffers;
using System.Buffers.Binary;
using System.Globalization;
using System.Runtime.InteropServices;
using TraceLab.Core;
using ZstdSharp;
using ZstdSharp.Unsafe;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// The records of a perf record -z data section, as one byte sequence: the records perf wrote as they are and the
/// contents of its COMPRESSED records decompressed in place. perf record compresses every push of a ring buffer with
/// one zstd stream for the whole file (ZSTD_compressStream + ZSTD_flushStream on one context, tools/perf/util/zstd.c),
/// so the COMPRESSED records are consecutive pieces of one zstd stream, not frames of their own, and a record may be
/// cut across two of them (a ring buffer wrap); perf reads them with one decompression context per file and keeps the
/// cut-off end for the next one (perf_session__process_compressed_event, tools/perf/util/tool.c). An uncompressed
/// record met while a decompressed one is incomplete (FINISHED_ROUND) comes first, as in perf.
/// <para>
/// Bytes live in one native buffer (pinned: spans into it hold until the next <see cref="Record"/>); offsets are
/// "logical" offsets into the whole sequence. The buffer keeps what the merge still has to deliver (it is told the
/// oldest offset it needs) and grows only while that is more than the buffer holds, up to <see cref="MaxBytes"/>;
/// the reader flushes older events when <see cref="Pressure"/> says the held bytes grew large. Decompression goes in
/// chunks of at most <see cref="ChunkBytes"/>, so one record's inflated size never has to fit at once.
/// </para>
/// <para>
/// Bombs: a COMPRESSED record inflating to more than HEADER_COMPRESSED's mmap_len (perf's own buffer for one record)
/// is damage, and so is data inflating more than <see cref="MaxRatio"/> times its compressed size overall; zstd
/// windows beyond 2^<see cref="WindowLogMax"/> bytes are refused (zstd's own default limit).
/// </para>
/// </summary>
internal sealed unsafe class InflatedRecords : IDisposable
{
    private const int HeaderBytes = 8;
    /// <summary>Most output decompressed in one step.</summary>
    public const int ChunkBytes = 1 << 20;
    /// <summary>Held bytes beyond which the reader delivers older events early (see <see cref="Pressure"/>).</summary>
    public const long PressureBytes = 256L << 20;
    /// <summary>The buffer never grows past this: a file whose held records need more is refused.</summary>
    public const long MaxBytes = 1L << 30;
    /// <summary>
    /// Overall inflation limit: perf's zstd level 1 makes 7-13x on sched captures and ~100x on samples with zero-filled
    /// user stacks (the external perf.data the tests read: 97x); zstd's own format allows ~32,000x.
    /// </summary>
    public const long MaxRatio = 2048;
    /// <summary>
    /// zstd's default decompression window limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 128 MiB): levels 1-22 fit.
    /// </summary>
    public const int WindowLogMax = 27;
    private const int InitialBytes = 4 << 20;

    private readonly PerfRecordStream _outer;
    private readonly string _path;
    private readonly long _recordLimit;
    private readonly Decompressor _zstd = new();
    private byte* _buffer;
    private int _capacity;
    private long _origin;
    private int _length;
    /// <summary>
    /// Input of the COMPRESSED record being inflated: its file offset, where its data starts and ends in its body.
    /// </summary>
    private long _inputRecord = -1;
    private int _inputAt, _inputEnd;
    private long _inflatedFromRecord;
    private long _compressedTotal, _inflatedTotal;
    /// <summary>
    /// Where the bytes in the buffer came from: (logical start, file offset of the record), in order.
    /// </summary>
    private readonly List<(long Logical, long File)> _sources = new();

    public InflatedRecords(PerfRecordStream outer, string path, PerfCompression compression)
    {
        _outer = outer;
        _path = path;
        _recordLimit = compression.MmapLength;
        _zstd.SetParameter(ZSTD_dParameter.ZSTD_d_windowLogMax, WindowLogMax);
    }

    public byte* Base => _buffer;
    /// <summary>Logical offset of the buffer's first byte.</summary>
    public long Origin => _origin;
    public int Length => _length;

    /// <summary>COMPRESSED records read so far.</summary>
    public long CompressedRecords { get; private set; }

    /// <summary>Bytes decompressed so far.</summary>
    public long InflatedBytes => _inflatedTotal;

    /// <summary>
    /// The held bytes grew past <see cref="PressureBytes"/>: the merge should deliver older events now.
    /// </summary>
    public bool Pressure => _length > PressureBytes;

    /// <summary>Largest the buffer grew (bytes).</summary>
    public int PeakCapacity { get; private set; }

    /// <summary>
    /// Makes the whole record at <paramref name="at"/> (by its header's size; at least its header) lie in the buffer,
    /// keeping the bytes from <paramref name="keep"/> on. False when the data ends first; then
    /// <paramref name="left"/> is the bytes there are at <paramref name="at"/>.
    /// </summary>
    /// <exception cref="TraceFormatException">A compressed record is damaged or inflates beyond the limits.</exception>
    public bool Record(long at, Func<long> keep, out int left)
    {
        while (true)
        {
            var avail = _origin + _length - at;
            if (avail >= HeaderBytes)
            {
                var head = new ReadOnlySpan<byte>(_buffer + (at - _origin), HeaderBytes);
                int size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
                // An impossible size is the caller's to report; a whole record is there.
                if (size < HeaderBytes || avail >= size)
                {
                    left = (int)Math.Min(avail, int.MaxValue);
                    return true;
                }
            }

            if (_inputRecord >= 0)
            {
                Inflate(at, keep);
                continue;
            }

            if (!_outer.MoveNext())
            {
                left = (int)avail;
                return false;
            }

            var type = _outer.Type;
            if (PerfRecordType.IsCompressed(type))
            {
                StartInput(type);
            }
            else if (type != PerfRecordType.Auxtrace)
            {
                // A record perf wrote as it is (FINISHED_ROUND, the synthesized ones at the start): it comes before
                // any incomplete decompressed record, which moves up behind it.
                Insert(at, keep);
            }
        }
    }

    private void StartInput(uint type)
    {
        var body = _outer.Body;
        var start = 0;
        var end = body.Length;
        if (type == PerfRecordType.Compressed2)
        {
            // u64 data_size, then the data, then padding to 8 bytes.
            if (body.Length < 8)
                throw new TraceFormatException(_path, _outer.RecordOffset, "a COMPRESSED2 record with its data size");
            var size = BinaryPrimitives.ReadUInt64LittleEndian(body);
            if (size > (ulong)(body.Length - 8))
                throw new TraceFormatException(_path, _outer.RecordOffset,
                    $"a COMPRESSED2 data size within the record, found {size}");
            start = 8;
            end = 8 + (int)size;
        }

        CompressedRecords++;
        _inputRecord = _outer.RecordOffset;
        _inputAt = start;
        _inputEnd = end;
        _inflatedFromRecord = 0;
        _compressedTotal += end - start;
        _sources.Add((_origin + _length, _inputRecord));
        if (start == end) _inputRecord = -1;
    }

    /// <summary>Decompresses up to a chunk of the current COMPRESSED record's data onto the buffer's end.</summary>
    private void Inflate(long at, Func<long> keep)
    {
        Room(ChunkBytes, at, keep);
        var input = _outer.Body[_inputAt.._inputEnd];
        var output = new Span<byte>(_buffer + _length, Math.Min(ChunkBytes, _capacity - _length));
        OperationStatus status;
        int consumed, written;
        try
        {
            status = _zstd.UnwrapStream(input, output, out consumed, out written);
        }
        catch (ZstdException e)
        {
            throw Damaged($"zstd data that decompresses ({e.Message})");
        }

        if (status == OperationStatus.InvalidData)
            throw Damaged("zstd data that decompresses (the zstd stream is corrupt)");
        _inputAt += consumed;
        _length += written;
        _inflatedFromRecord += written;
        _inflatedTotal += written;
        if (_inflatedFromRecord > _recordLimit)
            throw Damaged($"a COMPRESSED record inflating to at most {_recordLimit:N0} bytes " +
                "(HEADER_COMPRESSED mmap_len), found more");
        if (_inflatedTotal > MaxRatio * Math.Max(_compressedTotal, 1024))
            throw Damaged($"compressed data inflating at most {MaxRatio}x (a decompression bomb?), " +
                $"found {_inflatedTotal:N0} bytes from {_compressedTotal:N0}");
        // Input used up and the output not full: zstd holds nothing more of this record.
        if (_inputAt >= _inputEnd && written < output.Length) _inputRecord = -1;
        else if (consumed == 0 && written == 0) throw Damaged("zstd data that makes progress");
    }

    private TraceFormatException Damaged(string expected) => new(_path, _inputRecord, expected);

    /// <summary>
    /// Copies the outer stream's current record in at <paramref name="at"/>, before the bytes already there.
    /// </summary>
    private void Insert(long at, Func<long> keep)
    {
        var body = _outer.Body;
        var size = HeaderBytes + body.Length;
        Room(size, at, keep);
        var rel = (int)(at - _origin);
        var tail = _length - rel;
        var dest = new Span<byte>(_buffer + rel, size + tail);
        if (tail > 0) dest[..tail].CopyTo(dest[size..]);
        BinaryPrimitives.WriteUInt32LittleEndian(dest, _outer.Type);
        BinaryPrimitives.WriteUInt16LittleEndian(dest[4..], _outer.Misc);
        BinaryPrimitives.WriteUInt16LittleEndian(dest[6..], (ushort)size);
        body.CopyTo(dest[HeaderBytes..]);
        _length += size;
        // Sources after the insertion point move up behind it.
        var i = _sources.Count;
        while (i > 0 && _sources[i - 1].Logical >= at)
        {
            i--;
            _sources[i] = (_sources[i].Logical + size, _sources[i].File);
        }

        _sources.Insert(i, (at, _outer.RecordOffset));
    }

    /// <summary>Makes room for <paramref name="count"/> more bytes: drops what nobody needs, else grows.</summary>
    private void Room(int count, long at, Func<long> keep)
    {
        if (_capacity - _length >= count) return;
        var from = Math.Min(at, keep());
        if (from > _origin)
        {
            var drop = (int)Math.Min(from - _origin, _length);
            Buffer.MemoryCopy(_buffer + drop, _buffer, _capacity, _length - drop);
            _origin += drop;
            _length -= drop;
            var keepFrom = 0;
            while (keepFrom + 1 < _sources.Count && _sources[keepFrom + 1].Logical <= _origin) keepFrom++;
            _sources.RemoveRange(0, keepFrom);
        }

        // Grow when less than half would be free: compacting again soon would copy the held bytes again and again.
        if (_capacity - _length >= Math.Max(count, _capacity / 2)) return;
        var want = Math.Max((long)InitialBytes, 2L * _capacity);
        while (want - _length < count) want *= 2;
        if (want > MaxBytes)
            throw new TraceFormatException(_path, _inputRecord >= 0 ? _inputRecord : _outer.RecordOffset,
                $"records awaiting time order within {MaxBytes >> 20} MiB decompressed");
        var grown = (byte*)NativeMemory.Alloc((nuint)want);
        if (_buffer is not null)
        {
            Buffer.MemoryCopy(_buffer, grown, want, _length);
            NativeMemory.Free(_buffer);
        }

        _buffer = grown;
        _capacity = (int)want;
        PeakCapacity = Math.Max(PeakCapacity, _capacity);
    }

    /// <summary>File offset of the record the byte at logical offset <paramref name="logical"/> came from.</summary>
    public long FileOffsetOf(long logical)
    {
        var file = _sources.Count > 0 ? _sources[0].File : _outer.RecordOffset;
        foreach (var (start, f) in _sources)
        {
            if (start > logical) break;
            file = f;
        }

        return file;
    }

    /// <summary>
    /// A damage report at logical offset <paramref name="logical"/>: the file offset of its record, and where inside.
    /// </summary>
    public TraceFormatException Fail(long logical, string expected) =>
        new(_path, FileOffsetOf(logical), string.Create(CultureInfo.InvariantCulture,
            $"{expected} (at byte {logical:N0} of the records as decompressed)"));

    public void Dispose()
    {
        _outer.Release();
        _zstd.Dispose();
        if (_buffer is not null) NativeMemory.Free(_buffer);
        _buffer = null;
        _capacity = _length = 0;
        _sources.Clear();
    }
}
