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
/// delivery a cursor walks it again, stopping at each event. Events the scan delivered as late (older than
/// <see cref="LateLimit"/>, the delivered time when the run was scanned) and records that are not events are stepped
/// over the same way the scan stepped over them.
/// <para>
/// A run the scan could decode as it read (a range of <see cref="DecodedEvents"/>) delivers those events as they are,
/// with no second walk; once the ring is full, the run's later events are a file range as above
/// (<see cref="ContinueInFile"/>), delivered after its decoded ones.
/// </para>
/// <para>
/// The cursor reads the records where the scan left them, in the <see cref="PerfRecordStream"/>'s window, as long as
/// the window keeps them (rounds of a few hundred KB); once <see cref="Detach"/>ed (rounds larger than the window:
/// perf record -m 64M writes rounds of ~30 MB) it reads them through a mapped view of the file of its own, moved
/// along the run — no copy, as the scan reads them.
/// </para>
/// </summary>
internal sealed unsafe class SampleRun
{
    private const int HeaderBytes = 8;
    private PerfRecordStream? _window;
    private readonly PerfRecordStream _stream;
    private readonly TaskRecords _tasks;
    /// <summary>The current event comes from a task record (<see cref="_task"/>), not a tracepoint payload.</summary>
    private bool _isTask;
    private KernelEvent _task;
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

    /// <summary>The file's stacks when its samples carry callchains; null otherwise (no cost per sample).</summary>
    private readonly PerfStacks? _stacks;

    /// <summary>The events the scan decoded; this run's are numbered <see cref="_decodedNext"/> to
    /// <see cref="DecodedEnd"/>.</summary>
    private readonly DecodedEvents _decoded;
    private long _decodedNext;
    /// <summary>Number of the current event when it is a decoded one, else -1.</summary>
    private long _decodedCurrent;

    public SampleRun(long start, long lateLimit, long firstDecoded, PerfRecordStream window, ViewBudget views,
        TaskRecords tasks, DecodedEvents decoded, PerfStacks? stacks = null)
    {
        _stacks = stacks;
        _views = views;
        _stream = window;
        _tasks = tasks;
        _decoded = decoded;
        Reuse(start, lateLimit, firstDecoded);
    }

    /// <summary>
    /// Makes a delivered run (its view released at its end) a new one starting at <paramref name="start"/>: a busy
    /// file is cut into a run every few events (each drain of a CPU's buffer), and a new object per run was most of
    /// what the reader allocated.
    /// </summary>
    /// <param name="firstDecoded">The number of the run's first event in <see cref="DecodedEvents"/>, or -1 when the
    /// run is a file range from <paramref name="start"/> on.</param>
    public SampleRun Reuse(long start, long lateLimit, long firstDecoded)
    {
        if (_view is not null) throw new InvalidOperationException("SampleRun.Reuse: the run still maps a view");
        Start = _pos = start;
        LateLimit = lateLimit;
        Decoding = firstDecoded >= 0;
        _decodedNext = DecodedEnd = Decoding ? firstDecoded : 0;
        _decodedCurrent = -1;
        // A decoded run has no file range until it continues in the file (End = Start: empty).
        End = Decoding ? start : 0;
        LastTime = Time = Offset = _rawAt = 0;
        Cpu = _rawLength = _viewBytes = _viewLength = 0;
        _viewOffset = 0;
        _viewBase = null;
        _window = _stream;
        _isTask = _started = false;
        _task = default;
        Stack = 0;
        return this;
    }

    /// <summary>File offset of the run's first event record.</summary>
    public long Start { get; private set; }
    /// <summary>File offset just past the run's last event record.</summary>
    public long End { get; set; }
    /// <summary>Events older than this were delivered as late during the scan and are not part of the run.</summary>
    public long LateLimit { get; private set; }
    /// <summary>Scan: time of the run's newest event so far (an older one starts a new run).</summary>
    public long LastTime { get; set; }

    /// <summary>Scan: the run's events so far are decoded ones, and the next may be too.</summary>
    public bool Decoding { get; private set; }

    /// <summary>Scan: one past the number of the run's last decoded event.</summary>
    public long DecodedEnd { get; set; }

    /// <summary>
    /// Scan: the ring is full; the run's events from the record at <paramref name="recordOffset"/> on are a file
    /// range, delivered after its decoded ones.
    /// </summary>
    public void ContinueInFile(long recordOffset)
    {
        Decoding = false;
        Start = _pos = End = recordOffset;
    }

    /// <summary>
    /// The lowest number of a decoded event this run has still to deliver, its current one included
    /// (<see cref="long.MaxValue"/>: none).
    /// </summary>
    public long DecodedNeed =>
        _decodedCurrent >= 0 ? _decodedCurrent : _decodedNext < DecodedEnd ? _decodedNext : long.MaxValue;

    /// <summary>True while the cursor reads from the scan's window rather than from the file.</summary>
    public bool InWindow => _window is not null;

    /// <summary>
    /// The oldest file offset the cursor still reads: its current event's record, or where it resumes
    /// (<see cref="long.MaxValue"/> when it reads nothing more from the file: its events left are decoded ones).
    /// </summary>
    public long Need => _started ? Offset : _pos < End ? _pos : long.MaxValue;

    // The cursor's current event (after a true MoveNext).
    public long Time { get; private set; }
    /// <summary>The current event's CPU when it is read from the file (a decoded event carries its own).</summary>
    public int Cpu { get; private set; }
    /// <summary>File offset of the current event's record: orders events of equal time as the file does.</summary>
    public long Offset { get; private set; }
    /// <summary>The current event's stack id (0: none).</summary>
    public int Stack { get; private set; }

    /// <summary>The current event's tracepoint payload (valid until the window or the cursor moves on).</summary>
    public ReadOnlySpan<byte> Raw
    {
        // Inlined into Deliver: read once per event delivered from the file.
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _window is { } w ? w.Window.Slice((int)(_rawAt - w.BufferFileOffset), _rawLength) : ViewRaw();
    }

    /// <summary>The current event's payload in the detached cursor's view, which holds it whole.</summary>
    private ReadOnlySpan<byte> ViewRaw()
    {
        var inView = _rawAt - _viewOffset;
        if (_view is null || inView < 0 || inView > _viewLength - _rawLength)
            throw new TraceFormatException(_stream.Path, _rawAt, "an event payload inside the records read there");
        return new ReadOnlySpan<byte>(_viewBase + inView, _rawLength);
    }

    /// <summary>Bytes of the file the detached cursor has mapped.</summary>
    public int BufferBytes => _view is null ? 0 : _viewLength;

    /// <summary>From now on the cursor reads from the file, through a view of about <paramref name="bytes"/>.</summary>
    /// <exception cref="TraceFormatException">The file no longer holds what the scan found there.</exception>
    public void Detach(int bytes, string path)
    {
        if (_window is null) return;
        _window = null;
        Attach(bytes);
        // The current event's payload, from the file now (the cursor moves on from its record's end).
        if (_started) Map(path, Offset, (int)(_rawAt + _rawLength - Offset));
    }

    /// <summary>
    /// A detached cursor maps about <paramref name="bytes"/> at a time (never more than the run needs).
    /// </summary>
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
    public long Deliver(
        KernelEventDecoder decoder, CountingSink sink, ref KernelEvent e, SampleRun? next, long limit, long max,
        string path, SampleFormat samples, out bool more, out long last)
    {
        long n = 0;
        while (true)
        {
            if (_decodedCurrent >= 0)
            {
                sink.OnEvent(in _decoded[_decodedCurrent]);
            }
            else
            {
                if (_isTask) e = _task;
                else if (!decoder.Decode(Raw, Time, Cpu, ref e, updateNames: false))
                    throw new TraceFormatException(
                        path, Start, "the events read there before (the file changed while it was read)");
                if (_stacks is not null) e.Stack = _isTask ? 0 : Stack;
                sink.OnEvent(in e);
            }

            n++;
            last = Time;
            // The common case without MoveNext's call: an event read from the window (MoveNext does the same).
            var moved = _decodedNext >= DecodedEnd && _window is { } w
                ? NextInWindow(w, samples)
                : MoveNext(path, samples);
            if (!moved)
            {
                more = false;
                return n;
            }

            if (n >= max || Time > limit
                || (next is not null && !(Time < next.Time || (Time == next.Time && Offset < next.Offset))))
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
        if (_decodedNext < DecodedEnd)
        {
            // Time and offset order the run among the others; the event itself is delivered as decoded.
            var number = _decodedCurrent = _decodedNext++;
            Time = _decoded[number].Timestamp;
            Offset = _decoded.OffsetOf(number);
            return true;
        }

        if (_window is { } w) return NextInWindow(w, samples);
        _decodedCurrent = -1;
        while (_pos < End)
        {
            // Each span comes from the view current when it is taken: a remap unmaps the previous view, so a span
            // taken before it must not be read after (a record straddling the view's end did so: an access violation).
            var head = Bytes(path, _pos, HeaderBytes);
            var type = BinaryPrimitives.ReadUInt32LittleEndian(head);
            int size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
            if (size < HeaderBytes) throw Changed(path);
            if (type == PerfRecordType.Auxtrace)
            {
                var aux = BinaryPrimitives.ReadUInt64LittleEndian(Bytes(path, _pos, 16)[8..]);
                if (size > End - _pos || aux > (ulong)(End - _pos - size)) throw Changed(path);
                _pos += size + (long)aux;
                continue;
            }

            var record = Bytes(path, _pos, size);
            var offset = _pos;
            _pos += size;
            if (Deliver(type, record[..HeaderBytes], record[HeaderBytes..], offset, samples)) return true;
        }

        Release();
        return false;
    }

    /// <summary><see cref="MoveNext"/> once the run's decoded events are delivered, from the window.</summary>
    private bool NextInWindow(PerfRecordStream w, SampleFormat samples)
    {
        _decodedCurrent = -1;
        return WindowNext(w, samples);
    }

    /// <summary>
    /// The window holds every record from <see cref="Need"/> to the scan (it asks before dropping any), and the scan
    /// checked them all, so here only the steps are repeated.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
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
            var body = buffer.Slice(at + HeaderBytes, size - HeaderBytes);
            if (Deliver(type, head, body, offset, samples)) return true;
        }

        _started = false;
        return false;
    }

    /// <summary>
    /// The record at <paramref name="offset"/> (its header, then its body) becomes the cursor's current event when it
    /// is one: a task event this run delivers, or a sample of a traced event at or after <see cref="LateLimit"/>.
    /// </summary>
    // Inlined into the two loops that step over records: one call per event delivered from the file was most of
    // what reading it again cost in instructions besides the parse.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool Deliver(uint type, ReadOnlySpan<byte> head, ReadOnlySpan<byte> body, long offset,
        SampleFormat samples)
    {
        if (type != PerfRecordType.Sample)
            return TaskEvent(type, BinaryPrimitives.ReadUInt16LittleEndian(head[4..]), body, offset);
        if (samples.Parse(body, out var time, out var cpu, out var raw) != SampleParse.Event || time < LateLimit)
            return false;
        _isTask = false;
        Time = time;
        Cpu = cpu;
        Offset = offset;
        if (_stacks is not null) Stack = _stacks.Intern(samples, body, time);
        _rawAt = offset + HeaderBytes + ByteOffset(body, raw);
        _rawLength = raw.Length;
        _started = true;
        return true;
    }

    /// <summary>A task record the scan queued as an event (the same rule decides): built now, at delivery.</summary>
    private bool TaskEvent(uint type, ushort misc, ReadOnlySpan<byte> body, long offset)
    {
        if (!_tasks.IsEvent(type, misc) || !_tasks.Place(type, body, out var time, out var cpu) || time < LateLimit)
            return false;
        _tasks.Build(type, misc, body, time, cpu, ref _task);
        _isTask = true;
        Time = time;
        Cpu = cpu;
        Offset = offset;
        _rawAt = offset + HeaderBytes;
        _rawLength = 0;
        _started = true;
        return true;
    }

    /// <summary>
    /// The <paramref name="count"/> bytes of the run at file offset <paramref name="at"/>, in the current view (mapped
    /// first when the view does not hold them all); valid until the next call.
    /// </summary>
    /// <exception cref="TraceFormatException">The bytes are not inside the run.</exception>
    private ReadOnlySpan<byte> Bytes(string path, long at, int count)
    {
        var inView = at - _viewOffset;
        if (_view is null || inView < 0 || inView > _viewLength - count) inView = Map(path, at, count);
        return new ReadOnlySpan<byte>(_viewBase + inView, count);
    }

    /// <summary>
    /// Maps the file from <paramref name="at"/> on, at least <paramref name="count"/> bytes; returns where
    /// <paramref name="at"/> is in the view.
    /// </summary>
    private long Map(string path, long at, int count)
    {
        // Only bytes of the run (which the scan read) are mapped: never past the file's end, where a read faults.
        if (count < 0 || at < Start || count > End - at) throw Changed(path);
        var length = (int)Math.Min(End - at, Math.Max(count, _viewBytes));
        var view = new MappedFileView(_stream.Mapping, at, length);
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
