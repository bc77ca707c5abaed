using System.Buffers.Binary;
using System.IO.MemoryMappedFiles;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// A stretch of the data section whose events are already in time order (in practice one CPU's ring buffer within
/// one perf round), kept as a file range instead of decoded events: the scan notes where it starts and ends, and at
/// delivery a cursor goes through its events again. Events the scan delivered as late (older than
/// <see cref="LateLimit"/>, the delivered time when the run was scanned) and records that are not events are not
/// part of it.
/// <para>
/// While the <see cref="PerfRecordStream"/>'s window keeps the run's records (rounds of a few hundred KB), the cursor
/// reads the scan's notes on each event from the <see cref="HeldEventIndex"/> and the payload from the window: no
/// record is parsed twice. Once <see cref="Detach"/>ed (rounds larger than the window: perf record -m 64M writes
/// rounds of ~30 MB) it walks the records again through a small mapped view of the file of its own, moved along
/// the run, stepping over late events and other records the way the scan did.
/// </para>
/// </summary>
internal sealed unsafe class SampleRun
{
    private const int HeaderBytes = 8;
    private PerfRecordStream? _window;
    /// <summary>The scan's notes on the run's events; null when the index was full and the cursor walks the records.</summary>
    private readonly HeldEventIndex? _index;
    /// <summary>Sequence number in the index of the event after the current one.</summary>
    private long _next;
    private readonly MemoryMappedFile _file;
    private readonly ViewBudget _views;
    /// <summary>Bytes the detached cursor maps at once (0: not attached yet).</summary>
    private int _viewBytes;
    private MappedFileView? _view;
    private byte* _viewBase;
    private long _viewOffset;
    private int _viewLength;
    private long _pos;
    private long _rawAt;
    private int _rawLength;
    private bool _started;

    /// <param name="indexed">True: the scan notes the run's events in <paramref name="index"/> and the window keeps
    /// its records while it can; false: the cursor walks the records through its own view.</param>
    public SampleRun(long start, long lateLimit, PerfRecordStream window, HeldEventIndex index, bool indexed, ViewBudget views)
    {
        _views = views;
        Start = _pos = start;
        LateLimit = lateLimit;
        _file = window.Mapping;
        if (indexed)
        {
            _window = window;
            _index = index;
        }

        _next = EndSeq = index.Head;
    }

    /// <summary>True when the scan notes the run's events in the index (the merge reads no record twice).</summary>
    public bool Indexed => _index is not null;

    /// <summary>Sequence number of the first index entry the cursor has not read yet.</summary>
    public long NextSeq => _next;

    /// <summary>File offset of the run's first event record.</summary>
    public long Start { get; }
    /// <summary>File offset just past the run's last event record.</summary>
    public long End { get; set; }
    /// <summary>Events older than this were delivered as late during the scan and are not part of the run.</summary>
    public long LateLimit { get; }
    /// <summary>Scan: time of the run's newest event so far (an older one starts a new run).</summary>
    public long LastTime { get; set; }
    /// <summary>Sequence number in the <see cref="HeldEventIndex"/> just past the run's last event (while in the window).</summary>
    public long EndSeq { get; set; }

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
        : new ReadOnlySpan<byte>(_viewBase + (_rawAt - _viewOffset), _rawLength);

    /// <summary>Bytes of the file the detached cursor has mapped.</summary>
    public int BufferBytes => _view is null ? 0 : _viewLength;

    /// <summary>From now on the cursor reads from the file, through a view of about <paramref name="bytes"/>.</summary>
    /// <exception cref="TraceFormatException">The file no longer holds what the scan found there.</exception>
    public void Detach(int bytes, string path)
    {
        if (_window is null) return;
        _window = null;
        Attach(bytes);
        // The current event's payload, from the file now.
        if (_started) Ensure(path, _rawAt - 4, _rawLength + 4);
    }

    /// <summary>A detached cursor maps about <paramref name="bytes"/> at a time (never more than the run needs).</summary>
    public void Attach(int bytes)
    {
        if (_window is not null || _viewBytes > 0) return;
        _viewBytes = bytes;
    }

    /// <summary>
    /// Delivers the current event and the run's next ones while they come before <paramref name="next"/>'s current
    /// event (in time, then file order), are no later than <paramref name="limit"/>, and fewer than
    /// <paramref name="max"/>: a CPU's stretch of events between two of another's in one loop. <paramref name="more"/>
    /// is false when the run is done; <paramref name="last"/> is the time of the last event delivered.
    /// </summary>
    /// <exception cref="TraceFormatException">The file no longer holds what the scan found there.</exception>
    public long Deliver(KernelEventDecoder decoder, CountingSink sink, ref KernelEvent e, SampleRun? next, long limit, long max,
        string path, SampleFormat samples, out bool more, out long last)
    {
        long n = 0;
        while (true)
        {
            if (!decoder.Decode(Raw, Time, Cpu, ref e, updateNames: false))
                throw new TraceFormatException(path, Start, "the events read there before (the file changed while it was read)");
            sink.OnEvent(in e);
            n++;
            last = Time;
            if (!MoveNext(path, samples))
            {
                more = false;
                return n;
            }

            if (n >= max || Time > limit || (next is not null && !(Time < next.Time || (Time == next.Time && Offset < next.Offset))))
            {
                more = true;
                return n;
            }
        }
    }

    /// <summary>Moves to the run's next event; false (and the view is unmapped) at its end.</summary>
    /// <exception cref="TraceFormatException">The file no longer holds what the scan found there.</exception>
    public bool MoveNext(string path, SampleFormat samples)
    {
        if (_index is not null) return IndexNext(_index, path);
        while (_pos < End)
        {
            var at = _pos - _viewOffset;
            if (_view is null || at < 0 || at > _viewLength - HeaderBytes) at = Map(path, _pos, HeaderBytes);
            var head = new ReadOnlySpan<byte>(_viewBase + at, HeaderBytes);
            var type = BinaryPrimitives.ReadUInt32LittleEndian(head);
            int size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
            if (size < HeaderBytes) throw Changed(path);
            if (type == PerfRecordType.Auxtrace)
            {
                if (at > _viewLength - 16) at = Map(path, _pos, 16);
                _pos += size + (long)BinaryPrimitives.ReadUInt64LittleEndian(new ReadOnlySpan<byte>(_viewBase + at + 8, 8));
                continue;
            }

            if (at > _viewLength - size) at = Map(path, _pos, size);
            var offset = _pos;
            _pos += size;
            if (type != PerfRecordType.Sample) continue;
            var body = new ReadOnlySpan<byte>(_viewBase + at + HeaderBytes, size - HeaderBytes);
            if (samples.Parse(body, out var time, out var cpu, out var raw) != SampleParse.Event || time < LateLimit)
                continue;
            Time = time;
            Cpu = cpu;
            Offset = offset;
            _rawAt = offset + HeaderBytes + ByteOffset(body, raw);
            _rawLength = raw.Length;
            _started = true;
            return true;
        }

        Release();
        return false;
    }

    /// <summary>
    /// The scan noted each of the run's events in the <see cref="HeldEventIndex"/> (it asks before the window drops
    /// any record this cursor still needs, and the entries go only with their records), so here nothing is parsed
    /// again: the next entry is the next event.
    /// </summary>
    private bool IndexNext(HeldEventIndex index, string path)
    {
        if (_next < EndSeq)
        {
            ref readonly var e = ref index.At(_next++);
            Time = e.Time;
            Cpu = e.Cpu;
            Offset = Start + e.RecordDelta;
            _rawAt = Offset + e.RawDelta;
            _started = true;
            if (_window is { } w)
            {
                // The raw payload's u32 size is just before it (the scan checked it fits the record).
                _rawLength = (int)BinaryPrimitives.ReadUInt32LittleEndian(w.Window[(int)(_rawAt - 4 - w.BufferFileOffset)..]);
            }
            else
            {
                Ensure(path, _rawAt - 4, 4);
                _rawLength = (int)BinaryPrimitives.ReadUInt32LittleEndian(new ReadOnlySpan<byte>(_viewBase + (_rawAt - 4 - _viewOffset), 4));
                Ensure(path, _rawAt - 4, _rawLength + 4);
            }

            return true;
        }

        _pos = End;
        Release();
        return false;
    }

    /// <summary>Makes the view hold <paramref name="count"/> bytes from file offset <paramref name="at"/>.</summary>
    private void Ensure(string path, long at, int count)
    {
        if (_view is not null && at >= _viewOffset && at - _viewOffset <= _viewLength - count) return;
        Map(path, at, count);
    }

    /// <summary>Maps the file from <paramref name="at"/> on, at least <paramref name="count"/> bytes; returns where <paramref name="at"/> is in the view.</summary>
    private long Map(string path, long at, int count)
    {
        if (count < 0 || count > End - at) throw Changed(path);
        var length = (int)Math.Min(End - at, Math.Max(count, _viewBytes));
        var view = new MappedFileView(_file, at, length);
        _views.Add(length - (_view is null ? 0 : _viewLength));
        _view?.Dispose();
        _view = view;
        _viewBase = view.Pointer;
        _viewOffset = at;
        _viewLength = length;
        return 0;
    }

    private static long ByteOffset(ReadOnlySpan<byte> buffer, ReadOnlySpan<byte> inside) =>
        (long)Unsafe.ByteOffset(ref MemoryMarshal.GetReference(buffer), ref MemoryMarshal.GetReference(inside));

    /// <summary>Unmaps the cursor's view (the run is done, or the read stopped early).</summary>
    public void Release()
    {
        _started = false;
        if (_view is null) return;
        _views.Add(-_viewLength);
        _view.Dispose();
        _view = null;
        _viewBase = null;
        _viewLength = 0;
    }

    private TraceFormatException Changed(string path) =>
        new(path, _pos, "the records read there before (the file changed while it was read)");
}
