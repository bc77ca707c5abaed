using TraceLab.Analyzers;
using TraceLab.Core;

namespace TraceLab.Cli.Live;

/// <summary>One thread's activity over one live interval.</summary>
public readonly record struct LiveThreadRow(int Tid, long Switches, long ReadyNs, long RunNs);

/// <summary>
/// What the followed process's threads did in [<see cref="BeginNs"/>, <see cref="EndNs"/>) of trace time.
/// </summary>
/// <param name="OriginNs">Timestamp of the first event of the stream (times are shown relative to it).</param>
public sealed record LiveInterval(long BeginNs, long EndNs, IReadOnlyList<LiveThreadRow> Threads, long OriginNs = 0);

/// <summary>
/// The `--live` view's numbers: the same <see cref="ThreadAccounting"/> the report uses, fed in real time, and every
/// <c>intervalNs</c> of trace time the change of each thread's switches (voluntary + involuntary), ready time and
/// run time since the previous interval. Intervals are cut by event timestamps, not the wall clock, so the output
/// depends only on the events. Times are credited when a state interval ends (at the next switch), like the report.
/// Called from one thread (the event source's); allocates once per interval, not per event.
/// </summary>
public sealed class LiveThreadRates(Action<LiveInterval> emit, long intervalNs = 1_000_000_000) : IKernelEventSink
{
    private readonly ThreadAccounting _accounting = new();
    private readonly Dictionary<int, (long Switches, long ReadyNs, long RunNs)> _previous = [];
    private readonly Action<LiveInterval> _emit = emit;
    private readonly long _intervalNs = intervalNs;
    private long _begin = long.MinValue;
    private long _origin;
    private volatile int _pid;

    /// <summary>Report only this process's threads (0, the default: every thread that did something).</summary>
    public void Follow(int pid) => _pid = pid;

    public void OnEvent(in KernelEvent e)
    {
        if (_begin == long.MinValue) _begin = _origin = e.Timestamp;
        while (e.Timestamp >= _begin + _intervalNs)
        {
            Emit(_begin + _intervalNs);
            _begin += _intervalNs;
        }
        _accounting.OnEvent(in e);
    }

    private void Emit(long end)
    {
        var pid = _pid;
        var seen = _accounting.Threads.Keys;
        IEnumerable<int> tids = pid != 0 ? _accounting.Lineage.Descendants(pid, seen) : seen;
        var rows = new List<LiveThreadRow>();
        foreach (var tid in tids)
        {
            if (tid <= 0 || !_accounting.Threads.TryGetValue(tid, out var st)) continue;
            var now = (st.VoluntarySwitches + st.InvoluntarySwitches, st.ReadyNs, st.RunNs);
            var before = _previous.GetValueOrDefault(tid);
            _previous[tid] = now;
            var row = new LiveThreadRow(
                tid, now.Item1 - before.Switches, now.ReadyNs - before.ReadyNs, now.RunNs - before.RunNs);
            if (row.Switches != 0 || row.ReadyNs != 0 || row.RunNs != 0) rows.Add(row);
        }
        rows.Sort((a, b) => a.Tid.CompareTo(b.Tid));
        _emit(new LiveInterval(end - _intervalNs, end, rows, _origin));
    }
}
