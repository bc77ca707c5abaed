using System.Runtime.CompilerServices;
using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// Leaves out the unmodelled events (<see cref="KernelEventKind.Other"/>) that can change nothing an analysis keeps:
/// one logged by the thread that logged the event just after it, on the same CPU, in the same context (thread or
/// interrupt), with no event of any other CPU in between, and no stack, when the event just before it left that thread
/// known to run there: an evidence kind logged by the same thread in the same context, or the switch that put the
/// thread on that CPU.
/// </summary>
/// <remarks>
/// <para>
/// Why: on a busy system most events are such repeats (`sched_stat_runtime` and `sched_wakeup` next to the waking and
/// the switch of the same thread: 28 % of the busy perf.data's 1.49 M events; `sched_stat_runtime` between a thread's
/// switch-in and its next event: another 20 %), and every analysis paid for each one the dispatch, the per-thread
/// lookups and, beside an analysis thread, the hand-over.
/// </para>
/// <para>
/// Why nothing changes (the contract every analysis keeps, docs/architecture.md#unmodelled-events): an unmodelled
/// event is only evidence that its thread runs on its CPU. The event before it has already left every analysis with
/// that thread as the one its CPU runs: an evidence kind itself (unmodelled, waking, syscall) of the same thread, CPU
/// and context (or, for an unmodelled event naming another thread than the CPU's switch chain, left it as it was),
/// or the switch to that thread on that CPU (every analysis takes the thread switched in as running there, its wait
/// over); the left-out event would only have found it so. What it would have moved forward (the CPU's last evidence,
/// the trace's last timestamp) the event after it moves further, before anything reads it: that event is of the same
/// thread and CPU, and nothing else comes between. So of a run of such events, only the event before the run and the
/// event after it remain.
/// </para>
/// <para>
/// The last event is held until the next one arrives (or <see cref="Finish"/>), and only when it could be left out:
/// the other events pass straight through, in order.
/// </para>
/// </remarks>
public sealed class RedundantEvidenceFilter(IKernelEventSink sink) : IKernelEventSink
{
    /// <summary>Kinds whose event leaves its thread known to run on its CPU, and nothing else to undo.</summary>
    private const int EvidenceKinds = (1 << (int)KernelEventKind.Other) | (1 << (int)KernelEventKind.Waking)
        | (1 << (int)KernelEventKind.SyscallEnter) | (1 << (int)KernelEventKind.SyscallExit);

    private long _prevTimestamp = long.MinValue;
    private int _prevCpu = -1;
    private int _prevTid = -1;
    private bool _prevInterrupt;
    /// <summary>The previous event was of an evidence kind (and the thread it names is not the one it wakes).</summary>
    private bool _prevEvidence;
    /// <summary>The thread the previous event, a switch, put on its CPU (0: it was no switch, or to idle).</summary>
    private int _prevSwitchedTo;
    private bool _held;
    private KernelEvent _pending;

    /// <summary>Events left out so far.</summary>
    public long LeftOut { get; private set; }

    public void OnEvent(in KernelEvent e)
    {
        if (_held)
        {
            _held = false;
            // The held event sits between two events of its thread on its CPU: nothing it did would show.
            if (e.Cpu == _pending.Cpu && e.CurrentTid == _pending.CurrentTid && e.Timestamp >= _pending.Timestamp)
                LeftOut++;
            else sink.OnEvent(_pending);
        }

        var tid = e.CurrentTid;
        var interrupt = EventFlags.InInterrupt(e.Flags);
        var kind = e.Kind;
        var candidate = kind == KernelEventKind.Other && e.Cpu == _prevCpu && interrupt == _prevInterrupt
            && ((_prevEvidence && tid == _prevTid) || (tid > 0 && tid == _prevSwitchedTo && !interrupt))
            && e.StackId == 0 && e.Timestamp >= _prevTimestamp;
        _prevTimestamp = e.Timestamp;
        _prevCpu = e.Cpu;
        _prevTid = tid;
        _prevInterrupt = interrupt;
        _prevEvidence = tid > 0 && ((EvidenceKinds >> (int)kind) & 1) != 0
            && (kind != KernelEventKind.Waking || e.WokenTid != tid);
        _prevSwitchedTo = kind == KernelEventKind.Switch ? e.NextTid : 0;
        if (candidate) Hold(e);
        else sink.OnEvent(e);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Hold(in KernelEvent e)
    {
        _pending = e;
        _held = true;
    }

    /// <summary>
    /// Reads the whole trace into <paramref name="sink"/>, through a filter when <paramref name="leaveOut"/> (the one
    /// way every pass reads: the held event is delivered at the end); returns the events left out.
    /// </summary>
    public static long Read(IKernelTraceReader reader, IKernelEventSink sink, bool leaveOut,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(reader);
        if (!leaveOut)
        {
            reader.Read(sink, cancellationToken);
            return 0;
        }
        var filter = new RedundantEvidenceFilter(sink);
        reader.Read(filter, cancellationToken);
        filter.Finish();
        return filter.LeftOut;
    }

    /// <summary>
    /// How many of <paramref name="reader"/>'s events a pass leaves out (`tracelab bench` says it; the tests check a
    /// trace has some before comparing results with and without). Reads the whole trace.
    /// </summary>
    public static long LeftOutOf(IKernelTraceReader reader) => Read(reader, Nothing.Sink, leaveOut: true);

    private sealed class Nothing : IKernelEventSink
    {
        public static readonly Nothing Sink = new();

        public void OnEvent(in KernelEvent e)
        {
        }
    }

    /// <summary>Delivers the event still held, if any. Call once, after the last event.</summary>
    public void Finish()
    {
        if (!_held) return;
        _held = false;
        sink.OnEvent(_pending);
        _pending = default;
    }
}
