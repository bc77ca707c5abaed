using TraceLab.Core;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// Puts decoded events back in time order the way perf's own ordered-events queue does. perf record writes each
/// CPU's buffer in turn and a FINISHED_ROUND record after each pass over all buffers; at a FINISHED_ROUND every
/// event up to the newest timestamp seen before the previous FINISHED_ROUND is final. Events with equal timestamps
/// keep file order. Memory is two rounds of events (arrays reused; they grow only to the largest round): bounded by
/// perf record's buffer size (-m) times the CPUs, not by the trace length. perf itself never cuts a round short; a
/// file without rounds (or with a round beyond <see cref="MaxQueued"/> events) is flushed by halves as a safety net,
/// and events that then arrive older than what was delivered are counted as late.
/// </summary>
internal sealed class RoundQueue
{
    /// <summary>
    /// Events held before a forced flush of the older half. A round of perf record -m 64M on 2 CPUs holds ~1.2 M
    /// events; cutting a round short reorders events (late ones), so the limit is far above real rounds.
    /// </summary>
    public const int MaxQueued = 1 << 22;

    private struct Key : IComparable<Key>
    {
        public long Time;
        public long Seq;
        public int Index;

        public readonly int CompareTo(Key other)
        {
            var c = Time.CompareTo(other.Time);
            return c != 0 ? c : Seq.CompareTo(other.Seq);
        }
    }

    private Key[] _keys = new Key[4096];
    private KernelEvent[] _events = new KernelEvent[4096];
    private KernelEvent[] _spare = new KernelEvent[4096];
    private int _count;
    private long _seq;
    private long _maxTime = long.MinValue;
    private long _previousRoundMax = long.MinValue;
    private long _lastFlushed = long.MinValue;

    public int Count => _count;

    /// <summary>Events that arrived older than an already flushed time: delivered at once, as perf does.</summary>
    public long LateEvents { get; private set; }

    /// <summary>True when <paramref name="time"/> is older than what was already delivered (the caller delivers it directly).</summary>
    public bool IsLate(long time) => time < _lastFlushed;

    public void CountLate() => LateEvents++;

    /// <summary>A slot for the next event; call <see cref="Commit"/> with its time once it is filled.</summary>
    public ref KernelEvent Next()
    {
        if (_count == _events.Length) Grow();
        return ref _events[_count];
    }

    public void Commit(long time)
    {
        _keys[_count] = new Key { Time = time, Seq = _seq++, Index = _count };
        _count++;
        if (time > _maxTime) _maxTime = time;
    }

    public bool Full => _count >= MaxQueued;

    /// <summary>FINISHED_ROUND: deliver everything up to the newest time of the previous round.</summary>
    public void FinishRound(IKernelEventSink sink)
    {
        Flush(_previousRoundMax, sink);
        _previousRoundMax = _maxTime;
    }

    /// <summary>The queue is full without rounds: deliver the older half.</summary>
    public void FlushHalf(IKernelEventSink sink)
    {
        Sort();
        Emit(_count / 2, sink);
    }

    public void FlushAll(IKernelEventSink sink) => Flush(long.MaxValue, sink);

    private void Flush(long limit, IKernelEventSink sink)
    {
        if (_count == 0 || limit == long.MinValue) return;
        Sort();
        var n = 0;
        while (n < _count && _keys[n].Time <= limit) n++;
        Emit(n, sink);
    }

    private void Sort() => Array.Sort(_keys, 0, _count);

    /// <summary>Delivers the first <paramref name="n"/> sorted events and compacts the rest (in sorted order) to the front.</summary>
    private void Emit(int n, IKernelEventSink sink)
    {
        for (var i = 0; i < n; i++) sink.OnEvent(in _events[_keys[i].Index]);
        if (n > 0) _lastFlushed = _keys[n - 1].Time;
        var rest = _count - n;
        for (var i = 0; i < rest; i++)
        {
            var k = _keys[n + i];
            _spare[i] = _events[k.Index];
            _keys[i] = k with { Index = i };
        }

        (_events, _spare) = (_spare, _events);
        _count = rest;
    }

    private void Grow()
    {
        var size = _events.Length * 2;
        Array.Resize(ref _events, size);
        Array.Resize(ref _keys, size);
        _spare = new KernelEvent[size];
    }
}
