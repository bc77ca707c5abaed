using System.Runtime.CompilerServices;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// Puts events back in time order the way perf's own ordered-events queue does, without holding them. perf record
/// writes each CPU's buffer in turn and a FINISHED_ROUND record after each pass over all buffers; at a
/// FINISHED_ROUND every event up to the newest timestamp seen before the previous FINISHED_ROUND is final. Events
/// with equal timestamps keep file order; events older than what was delivered already are delivered at once and
/// counted as late (the scan does that, <see cref="IsLate"/>).
/// <para>
/// Each CPU's buffer is written in time order, so the scan cuts the file into <see cref="SampleRun"/>s — stretches
/// whose events are in time order, a new one wherever time goes back — and keeps only their file ranges. A flush is
/// a k-way merge over the runs' cursors (ties by file offset) that delivers the top run's events in a loop until the
/// next run's head comes first, decoding each event as it is delivered. That gives the order a stable sort of all
/// held events by time gives, whatever the file holds (an out-of-order event only starts one more run), with memory
/// of one small mapped view per run that spans a flush: a few per CPU, not a round. The cursors read the records
/// from the scan's window (<see cref="PerfRecordStream"/>) while it holds them; runs the window could not keep map
/// their own view of the file.
/// </para>
/// <para>
/// Safety net: a file without rounds (or with a round beyond <see cref="MaxQueued"/> events) is flushed by halves,
/// as before; so is a file cut into more than <see cref="RunLimit"/> runs at once (its CPU buffers are not in time
/// order), which bounds the cursors' views.
/// </para>
/// </summary>
internal sealed class RoundMerger : IWindowKeeper
{
    /// <summary>
    /// Events held before a forced flush of the older half. A round of perf record -m 64M on 2 CPUs holds ~1.2 M
    /// events; cutting a round short reorders events (late ones), so the limit is far above real rounds.
    /// </summary>
    public const int MaxQueued = 1 << 22;

    /// <summary>
    /// Runs held before a forced flush of the older half: perf record's files hold about two per CPU at a time (the
    /// previous round's and this one's), so the limit is far above that and grows with the CPUs.
    /// </summary>
    public static int RunLimit(int cpus) => Math.Max(1024, 8 * cpus);

    /// <summary>
    /// Mapped view per detached run cursor: large enough that mapping costs little per event (a map and unmap per
    /// ~40,000 events: each unmap of a view the other thread's CPU may cache is a TLB shootdown, an IPI on a VM, and
    /// each new view takes its page faults again), small times the runs held (two per CPU). Measured on the 1 and
    /// 2 GB perf.data of docs/performance.md (with the 16 MiB window): 1 MiB read 15-20 % slower, 8 MiB (32 MiB
    /// budget) no faster than 4 MiB and 4 MiB more peak RSS.
    /// </summary>
    internal const int RunViewBytes = 4 * 1024 * 1024;
    private const int MinRunViewBytes = 16 * 1024;
    /// <summary>
    /// All cursor views together stay about this size when many runs are held at once (2 CPUs: 4 runs of 4 MiB).
    /// </summary>
    private const int ViewBudgetBytes = 16 * 1024 * 1024;

    private readonly string _path;
    private readonly SampleFormat _samples;
    private readonly KernelEventDecoder _decoder;
    private readonly PerfRecordStream _window;
    private readonly int _maxRuns;
    private readonly List<SampleRun> _scanned = new();
    private SampleRun? _open;
    private SampleRun[] _heap = new SampleRun[16];
    /// <summary>
    /// Delivered runs, made new ones by <see cref="SampleRun.Reuse"/>: at most the runs held at once.
    /// </summary>
    private readonly Stack<SampleRun> _spare = new();
    private int _heapCount;
    private long _held;
    private long _maxTime = long.MinValue;
    private long _previousRoundMax = long.MinValue;
    private long _lastFlushed = long.MinValue;
    private KernelEvent _event;
    private readonly ViewBudget _views = new();
    private readonly TaskRecords _tasks;
    private readonly PerfStacks? _stacks;

    public RoundMerger(string path, SampleFormat samples, KernelEventDecoder decoder, int cpus, PerfRecordStream window,
        TaskRecords tasks, PerfStacks? stacks = null, int decodedCapacity = 0)
    {
        _tasks = tasks;
        _stacks = stacks;
        Decoded = new DecodedEvents(decodedCapacity, OldestDecodedNeeded);
        _maxRuns = RunLimit(cpus);
        _path = path;
        _samples = samples;
        _decoder = decoder;
        _window = window;
        window.Keeper = this;
    }

    /// <summary>Events scanned and not yet delivered.</summary>
    public long Held => _held;

    /// <summary>Runs the scan cut the file into: about CPUs × rounds when each CPU's buffer is in time order.</summary>
    public long TotalRuns { get; private set; }

    /// <summary>Runs held at once, at most (scanned and not yet delivered to the end).</summary>
    public int PeakRuns { get; private set; }

    /// <summary>
    /// Bytes of the file the cursors have mapped at once, at most: what holding events costs instead of the events.
    /// </summary>
    public long PeakBufferBytes => _views.Peak;

    /// <summary>Runs the window could not keep: their cursors read the records from the file again.</summary>
    public long DetachedRuns { get; private set; }

    /// <summary>Events that arrived older than an already delivered time: delivered at once, as perf does.</summary>
    public long LateEvents { get; private set; }

    private int Runs => _scanned.Count + _heapCount + (_open is null ? 0 : 1);

    /// <summary>The events decoded at the scan (<see cref="Add"/> numbers them), until delivered.</summary>
    public DecodedEvents Decoded { get; }

    /// <summary>The lowest number of a decoded event still to deliver, over every held run.</summary>
    private long OldestDecodedNeeded()
    {
        var oldest = long.MaxValue;
        foreach (var run in _scanned) oldest = Math.Min(oldest, run.DecodedNeed);
        for (var i = 0; i < _heapCount; i++) oldest = Math.Min(oldest, _heap[i].DecodedNeed);
        if (_open is not null) oldest = Math.Min(oldest, _open.DecodedNeed);
        return oldest;
    }

    /// <summary>
    /// True when <paramref name="time"/> is older than what was already delivered (the caller delivers it directly).
    /// </summary>
    public bool IsLate(long time) => time < _lastFlushed;

    public void CountLate() => LateEvents++;

    /// <summary>
    /// An event the scan keeps: its time and its record's file range (the caller has checked the record). Returns the
    /// number of the slot in <see cref="Decoded"/> the caller decodes the event into, when <paramref name="decodable"/>
    /// and the ring has room; otherwise -1, and the event is read again from its record at delivery.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public long Add(long time, long recordOffset, long recordEnd, bool decodable = false)
    {
        // Most events extend the open run as a file range: done here, inlined into the scan's loop.
        var open = _open;
        if (open is not null && time >= open.LastTime && !open.Decoding)
        {
            open.End = recordEnd;
            open.LastTime = time;
            _held++;
            if (time > _maxTime) _maxTime = time;
            return -1;
        }

        return AddSlow(time, recordOffset, recordEnd, decodable);
    }

    /// <summary><see cref="Add"/> for an event that starts a run or may be decoded into the ring.</summary>
    private long AddSlow(long time, long recordOffset, long recordEnd, bool decodable)
    {
        var number = -1L;
        if (_open is null || time < _open.LastTime)
        {
            Close();
            if (decodable) Decoded.TryAdd(recordOffset, out number);
            _open = _spare.TryPop(out var spare)
                ? spare.Reuse(recordOffset, _lastFlushed, number)
                : new SampleRun(recordOffset, _lastFlushed, number, _window, _views, _tasks, Decoded, _stacks);
            TotalRuns++;
            var runs = Runs;
            if (runs > PeakRuns) PeakRuns = runs;
            if (runs >= _maxRuns) _tooManyRuns = true;
        }
        else if (_open.Decoding && !(decodable && Decoded.TryAdd(recordOffset, out number)))
        {
            _open.ContinueInFile(recordOffset);
        }

        if (number >= 0) _open.DecodedEnd = number + 1;
        else _open.End = recordEnd;
        _open.LastTime = time;
        _held++;
        if (time > _maxTime) _maxTime = time;
        return number;
    }

    /// <summary>
    /// Time to deliver older events early: too many held, too many runs, or too many decompressed bytes kept.
    /// </summary>
    /// <remarks>Asked after every event the scan holds, so it reads fields only: the runs are counted when they
    /// change (one more only where <see cref="Add"/> starts one, fewer only after a merge).</remarks>
    public bool Full
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _held >= MaxQueued || _tooManyRuns || _window.Pressure;
    }

    /// <summary>At least <see cref="RunLimit"/> runs are held: <see cref="Runs"/> ≥ <see cref="_maxRuns"/>.</summary>
    private bool _tooManyRuns;

    /// <summary>FINISHED_ROUND: deliver everything up to the newest time of the previous round.</summary>
    public void FinishRound(CountingSink sink)
    {
        if (_held > 0 && _previousRoundMax != long.MinValue) Merge(_previousRoundMax, long.MaxValue, sink);
        _previousRoundMax = _maxTime;
    }

    /// <summary>The queue is full without rounds: deliver the older half.</summary>
    public void FlushHalf(CountingSink sink) => Merge(long.MaxValue, _held / 2, sink);

    public void FlushAll(CountingSink sink)
    {
        if (_held > 0) Merge(long.MaxValue, long.MaxValue, sink);
    }

    /// <summary>Unmaps the views of runs left undelivered (the read stopped early) and gives the index back.</summary>
    public void Release()
    {
        Decoded.Release();
        for (var i = 0; i < _heapCount; i++) _heap[i].Release();
        _heapCount = 0;
        foreach (var run in _scanned) run.Release();
        _open?.Release();
    }

    private void Close()
    {
        if (_open is null) return;
        _scanned.Add(_open);
        _open = null;
    }

    /// <summary>
    /// Delivers, in (time, file offset) order, up to <paramref name="count"/> held events of time ≤ <paramref
    /// name="limit"/>.
    /// </summary>
    private void Merge(long limit, long count, CountingSink sink)
    {
        // A flush may change the late limit, so the run being scanned ends here.
        Close();
        if (_scanned.Count > 0)
        {
            var share = Share();
            foreach (var run in _scanned)
            {
                run.Attach(share);
                if (!run.MoveNext(_path, _samples)) throw RunChanged(run);
                Push(run);
            }

            _scanned.Clear();
        }

        long n = 0;
        while (n < count && _heapCount > 0)
        {
            var top = _heap[0];
            if (top.Time > limit) break;
            // The run next in line after the top one: the top delivers events in a loop until one of them would
            // come after it, without a heap operation per event (a CPU's run of events between two others').
            var next = _heapCount switch
            {
                1 => null,
                2 => _heap[1],
                _ => Before(_heap[2], _heap[1]) ? _heap[2] : _heap[1],
            };
            var delivered = top.Deliver(
                _decoder, sink, ref _event, next, limit, count - n, _path, _samples, out var more, out var last);
            n += delivered;
            _held -= delivered;
            _lastFlushed = last;
            if (!more)
            {
                _heap[0] = _heap[--_heapCount];
                _heap[_heapCount] = null!;
                if (_heapCount > 0) SiftDown(0);
                _spare.Push(top);
            }
            else if (next is not null)
            {
                SiftDown(0);
            }
        }

        Decoded.Delivered();
        _tooManyRuns = Runs >= _maxRuns;
    }

    /// <summary>View size for a cursor reading from the file: all of them together stay within the budget.</summary>
    private int Share() => (int)Math.Clamp(ViewBudgetBytes / Math.Max(1, Runs), MinRunViewBytes, RunViewBytes);

    public long KeepFrom(long floor)
    {
        var keep = long.MaxValue;
        foreach (var run in _scanned) keep = Math.Min(keep, Keep(run, floor));
        for (var i = 0; i < _heapCount; i++) keep = Math.Min(keep, Keep(_heap[i], floor));
        if (_open is not null) keep = Math.Min(keep, Keep(_open, floor));
        return keep;
    }

    public void DetachAll() => KeepFrom(long.MaxValue);

    /// <summary>
    /// Where <paramref name="run"/> needs the window from; a run needing bytes before the floor is detached.
    /// </summary>
    private long Keep(SampleRun run, long floor)
    {
        if (!run.InWindow) return long.MaxValue;
        var need = run.Need;
        if (need >= floor) return need;
        run.Detach(Share(), _path);
        DetachedRuns++;
        return long.MaxValue;
    }

    private TraceFormatException RunChanged(SampleRun run) =>
        new(_path, run.Start, "the events read there before (the file changed while it was read)");

    private static bool Before(SampleRun a, SampleRun b) =>
        a.Time < b.Time || (a.Time == b.Time && a.Offset < b.Offset);

    private void Push(SampleRun run)
    {
        if (_heapCount == _heap.Length) Array.Resize(ref _heap, _heap.Length * 2);
        var i = _heapCount++;
        while (i > 0)
        {
            var parent = (i - 1) / 2;
            if (!Before(run, _heap[parent])) break;
            _heap[i] = _heap[parent];
            i = parent;
        }

        _heap[i] = run;
    }

    private void SiftDown(int i)
    {
        var item = _heap[i];
        while (true)
        {
            var child = 2 * i + 1;
            if (child >= _heapCount) break;
            if (child + 1 < _heapCount && Before(_heap[child + 1], _heap[child])) child++;
            if (!Before(_heap[child], item)) break;
            _heap[i] = _heap[child];
            i = child;
        }

        _heap[i] = item;
    }
}
