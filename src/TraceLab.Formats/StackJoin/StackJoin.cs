using TraceLab.Core;

namespace TraceLab.Formats.StackJoin;

/// <summary>
/// An event of the stack recording reduced to what identifies it in the other recording of the same tracepoint hit:
/// its CPU, the thread it ran in, its kind, what it says (<see cref="Detail"/>) and its time on the shared clock; and
/// the stack it carried.
/// </summary>
/// <param name="Detail">The event's own fields folded into one number (a switch's previous state and next thread, a
/// waking's woken thread, a syscall's number and first two arguments): a thread's next event of the same kind, which
/// may follow within microseconds, differs in them unless it does the same thing again.</param>
public readonly record struct StackMark(long Timestamp, int Cpu, int Tid, KernelEventKind Kind, long Detail, int Stack)
{
    /// <summary>The mark of <paramref name="e"/>, an event read from the stack recording.</summary>
    public static StackMark Of(in KernelEvent e) =>
        new(e.Timestamp, e.Cpu, e.CurrentTid, e.Kind, DetailOf(e), e.StackId);

    /// <summary>What <paramref name="e"/> says, folded (the same for both recordings of one hit).</summary>
    public static long DetailOf(in KernelEvent e) => e.Kind switch
    {
        KernelEventKind.Switch => HashCode.Combine(e.PrevState, e.NextTid),
        KernelEventKind.Waking => e.WokenTid,
        KernelEventKind.SyscallEnter => e.HasSyscallNumber
            ? HashCode.Combine(e.SyscallNumber, e.SyscallArg0, e.SyscallArg1)
            : e.SyscallAddress,
        _ => 0,
    };
}

/// <summary>
/// Pairs the events of one trace with the stacks a second recording of the same tracepoints took (tracefs writes
/// trace.dat; <c>perf record</c> beside it copies the user stacks TraceLab unwinds). One tracepoint hit runs both
/// probes, one after the other, on the same CPU and in the same thread, with both recordings on CLOCK_MONOTONIC: the
/// stack of an event is the first not yet taken mark on its CPU with its thread, kind and fields, no more than
/// <see cref="Window"/> from it (a preempted thread's switch, which the stack recording leaves out, takes none).
/// Marks come in time order and are dropped once older than the window, so what is held is bounded by the events of
/// one window, not by the trace.
/// </summary>
/// <param name="next">The stack recording's next mark, in time order; null at its end.</param>
public sealed class StackJoin(Func<StackMark?> next)
{
    /// <summary>
    /// How far apart the two probes of one hit may be. Measured on lock_sites (13,425 futex calls, 2 CPUs): 441 ns
    /// apart at the median, 591 ns at the 99th percentile; 50 µs leaves room for an interrupt between the probes and
    /// none for the thread's next call of the same kind (docs/formats.md#stack-join).
    /// </summary>
    public const long Window = 50_000;

    private readonly Func<StackMark?> _next = next;
    private List<StackMark>[] _pending = [];
    private StackMark? _ahead;
    private bool _ended;

    /// <summary>Marks read from the stack recording.</summary>
    public long Marks { get; private set; }

    /// <summary>Events given a stack.</summary>
    public long Joined { get; private set; }

    /// <summary>Marks no event took (an event the trace lost, or one it did not record).</summary>
    public long Unmatched { get; private set; }

    /// <summary>
    /// Marks after the trace's last event (the stack recording stops after the trace): counted apart, not unmatched.
    /// </summary>
    public long AfterTrace { get; private set; }

    /// <summary>The most marks held at once (bounded by the marks of two windows, not by the trace).</summary>
    public int HeldMarks { get; private set; }

    private int _held;

    /// <summary>The largest distance in time between a joined event and its mark (ns).</summary>
    public long MaxOffset { get; private set; }

    /// <summary>
    /// The stack of <paramref name="e"/> (0: none): called for every event of the trace, in time order.
    /// </summary>
    public int StackOf(in KernelEvent e)
    {
        if (e.Kind is not (KernelEventKind.Switch or KernelEventKind.Waking or KernelEventKind.SyscallEnter)) return 0;
        Fill(e.Timestamp + Window);
        if ((uint)e.Cpu >= (uint)_pending.Length) return 0;
        var pending = _pending[e.Cpu];
        var dropped = 0;
        while (dropped < pending.Count && pending[dropped].Timestamp < e.Timestamp - Window) dropped++;
        if (dropped > 0)
        {
            pending.RemoveRange(0, dropped);
            Unmatched += dropped;
            _held -= dropped;
        }

        var detail = StackMark.DetailOf(e);
        for (var i = 0; i < pending.Count; i++)
        {
            var m = pending[i];
            if (m.Tid != e.CurrentTid || m.Kind != e.Kind || m.Detail != detail) continue;
            if (m.Timestamp > e.Timestamp + Window) break;
            pending.RemoveAt(i);
            _held--;
            Joined++;
            MaxOffset = Math.Max(MaxOffset, Math.Abs(m.Timestamp - e.Timestamp));
            return m.Stack;
        }

        return 0;
    }

    /// <summary>Counts what is left once the trace has ended at <paramref name="lastTimestamp"/>.</summary>
    public void Finish(long lastTimestamp)
    {
        Fill(lastTimestamp + Window);
        foreach (var p in _pending)
        {
            Unmatched += p.Count;
            p.Clear();
        }

        _held = 0;

        while (!_ended)
        {
            _ahead ??= _next();
            if (_ahead is null) break;
            _ahead = null;
            Marks++;
            AfterTrace++;
        }
    }

    private void Fill(long until)
    {
        while (!_ended)
        {
            _ahead ??= _next();
            if (_ahead is not { } mark)
            {
                _ended = true;
                return;
            }

            if (mark.Timestamp > until) return;
            _ahead = null;
            Marks++;
            if (mark.Cpu < 0 || mark.Cpu > 4095)
            {
                Unmatched++;
                continue;
            }

            if (mark.Cpu >= _pending.Length)
            {
                var grown = new List<StackMark>[mark.Cpu + 1];
                for (var c = 0; c < grown.Length; c++) grown[c] = c < _pending.Length ? _pending[c] : [];
                _pending = grown;
            }

            // The trace is at least at mark - Window: marks older than that less another window can match nothing,
            // even on a CPU the trace has no more events of.
            var list = _pending[mark.Cpu];
            var stale = 0;
            while (stale < list.Count && list[stale].Timestamp < mark.Timestamp - 2 * Window) stale++;
            if (stale > 0)
            {
                list.RemoveRange(0, stale);
                Unmatched += stale;
                _held -= stale;
            }

            list.Add(mark);
            HeldMarks = Math.Max(HeldMarks, ++_held);
        }
    }
}
