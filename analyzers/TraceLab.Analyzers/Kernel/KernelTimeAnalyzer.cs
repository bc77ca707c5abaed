using TraceLab.Core;

namespace TraceLab.Analyzers.Kernel;

/// <summary>
/// Splits each traced syscall (entry → exit) into time on CPU (kernel time), blocked and runnable, per thread and
/// per syscall, in one streaming pass. Only syscalls the capture recorded are seen (--syscalls lock: futex, semop,
/// sched_yield; all: every syscall): kernel time outside them (page faults, interrupts) is not attributed.
/// </summary>
public sealed class KernelTimeAnalyzer : IPerKindAnalyzer
{
    private readonly ThreadAccounting _accounting;
    private readonly MeasuredRegion _region;
    private readonly ThreadSlots _slots;
    private SlotTable<InFlight> _inFlight = new(static (_, _) => new InFlight());
    private readonly Dictionary<int, ThreadKernelStats> _threads = new();

    public KernelTimeAnalyzer(ThreadAccounting accounting)
    {
        _accounting = accounting;
        _region = accounting.Region;
        _slots = accounting.Slots;
    }

    /// <summary>Fewer exit → enter gaps than this and the boundary cost is not estimated (0).</summary>
    public const int MinBoundarySamples = 100;

    private readonly LatencyHistogram _gaps = new();
    private readonly LatencyHistogram _gapsAfterOffCpu = new();

    /// <summary>
    /// Estimated kernel cost of one syscall outside its tracepoints (entry before sys_enter, exit work after
    /// sys_exit) for a call that stayed on its CPU: the 1st percentile of a thread's sys_exit → next sys_enter gap on
    /// the same CPU with no switch between, after such a call. That gap is the entry and exit paths plus whatever
    /// user code ran, so it bounds the cost from above; its low percentile is where the user code between two
    /// syscalls is almost nothing (docs/metrics.md#boundary-cost). Set by <see cref="Complete"/>.
    /// </summary>
    public long BoundaryNs { get; private set; }
    public long BoundarySamples => _gaps.Count;

    /// <summary>
    /// The same for a call during which the thread was switched out: its return to user mode does more (the
    /// switched-in task's extended register state is restored there), so its gaps are sampled apart. The
    /// 1st percentile of those gaps, or <see cref="BoundaryNs"/> with fewer than <see cref="MinBoundarySamples"/>.
    /// </summary>
    public long BoundaryAfterOffCpuNs { get; private set; }
    public long BoundaryAfterOffCpuSamples => _gapsAfterOffCpu.Count;

    /// <summary>Any syscall event was in the trace: without them kernel time is "not captured", not zero.</summary>
    public bool SawSyscalls { get; private set; }
    /// <summary>Exits whose entry was not in the trace (syscalls already in progress when tracing started).</summary>
    public long UnmatchedExits { get; private set; }
    public IReadOnlyDictionary<int, ThreadKernelStats> Threads => _threads;

    private sealed class InFlight
    {
        public bool Active;
        /// <summary>The last exit, while the thread has stayed on <see cref="ExitCpu"/> since (-1 when not).</summary>
        public long ExitTs;
        public int ExitCpu = -1;
        /// <summary>
        /// The current call (after its exit: the last one, until the next entry) has been switched out at least once;
        /// the gap after such a call is sampled apart.
        /// </summary>
        public bool WentOffCpu;
        public long Key;
        public long EnterTs;
        /// <summary>
        /// Start of the current on-CPU piece, or of the current off-CPU piece when <see cref="OffCpu"/>.
        /// </summary>
        public long PieceStart;
        public bool OffCpu;
        public bool Blocked;
        /// <summary>
        /// Off CPU after a waking logged before its switch-out (ThreadAccounting.IsWokenBeforeSwitchOut): runnable
        /// from the switch-out, unless another waking comes first (then it was blocked until that one).
        /// </summary>
        public bool WokenEarly;
        public long WokenAt;
        public long CpuNs, BlockedNs, ReadyNs;
        /// <summary>
        /// The thread's stats and its last syscall's, once created: saves two lookups per syscall (never removed, so
        /// never stale).
        /// </summary>
        public ThreadKernelStats? Stats;
        public SyscallStats? LastSyscall;
    }


    private ThreadKernelStats Stats(int tid)
    {
        if (!_threads.TryGetValue(tid, out var s)) _threads[tid] = s = new ThreadKernelStats(tid);
        return s;
    }

    public void OnEvent(in KernelEvent e) => PerKindEntryPoints.Dispatch(this, e, _slots);

    // Per-kind entry points (IPerKindAnalyzer): AnalysisPass switches on the kind once and calls only the analyzers
    // that use it, with the slots of the threads the event names.

    public PerKindEvents Wants => PerKindEvents.SyscallsAndScheduling;

    public void OnSyscallEnter(in KernelEvent e, in EventSlots slots) => OnSyscallEnter(e, slots.Pid);

    public void OnSyscallExit(in KernelEvent e, in EventSlots slots) => OnSyscallExit(e, slots.Pid);

    public void OnSwitch(in KernelEvent e, in EventSlots slots) => OnSwitch(e, slots.Prev, slots.Next);

    public void OnWaking(in KernelEvent e, in EventSlots slots) => OnWaking(e, slots.Woken);

    private void OnSyscallEnter(in KernelEvent e, int slot)
    {
        if (e.CurrentTid <= 0 || EventFlags.InInterrupt(e.Flags)) return;
        var t = e.Timestamp;
        SawSyscalls = true;
        var f = _inFlight.At(slot, e.CurrentTid);
        if (f.ExitCpu == e.Cpu && !f.Active) (f.WentOffCpu ? _gapsAfterOffCpu : _gaps).Add(t - f.ExitTs);
        f.ExitCpu = -1;
        f.Active = true;
        f.WentOffCpu = false;
        f.Key = e.HasSyscallNumber ? e.SyscallNumber : e.SyscallAddress;
        f.EnterTs = f.PieceStart = t;
        f.OffCpu = f.Blocked = f.WokenEarly = false;
        f.CpuNs = f.BlockedNs = f.ReadyNs = 0;
    }

    private void OnSyscallExit(in KernelEvent e, int slot)
    {
        if (e.CurrentTid <= 0 || EventFlags.InInterrupt(e.Flags)) return;
        var t = e.Timestamp;
        SawSyscalls = true;
        var x = _inFlight.At(slot, e.CurrentTid);
        if (x.Active) Close(e.CurrentTid, x, t);
        else
        {
            UnmatchedExits++;
            x.WentOffCpu = false; // its entry was not seen: whether it went off CPU is unknown
        }
        x.ExitTs = t;
        x.ExitCpu = e.Cpu;
    }

    private void OnSwitch(in KernelEvent e, int prevSlot, int nextSlot)
    {
        var t = e.Timestamp;
        if (e.PrevTid > 0 && _inFlight.Find(prevSlot) is { } p)
        {
            p.ExitCpu = -1;
            if (p.Active && !p.OffCpu)
            {
                p.CpuNs += _region.Overlap(p.PieceStart, t);
                p.OffCpu = true;
                p.WentOffCpu = true;
                // Woken before its switch-out: runnable from here (ready) unless another waking says otherwise.
                var preempted = TaskState.IsPreempted(e.PrevState);
                p.WokenEarly = !preempted && _accounting.IsWokenBeforeSwitchOut(prevSlot);
                p.Blocked = !preempted && !p.WokenEarly;
                p.PieceStart = p.WokenAt = t;
            }
        }
        if (e.NextTid > 0 && _inFlight.Find(nextSlot) is { } n)
        {
            if (n.Active && n.OffCpu) BackOnCpu(n, t);
        }
    }

    private void OnWaking(in KernelEvent e, int wokenSlot)
    {
        var t = e.Timestamp;
        if (e.WokenTid <= 0 || _inFlight.Find(wokenSlot) is not { Active: true, OffCpu: true } w) return;
        // Blocked, or presumed runnable since a switch-out that followed an earlier waking: a waking now shows the
        // earlier one found it still running, and it was blocked until now.
        if (w.Blocked || w.WokenEarly)
        {
            w.BlockedNs += _region.Overlap(w.PieceStart, t);
            w.Blocked = w.WokenEarly = false;
            w.PieceStart = t;
        }
    }

    private void BackOnCpu(InFlight f, long t)
    {
        if (f.Blocked) f.BlockedNs += _region.Overlap(f.PieceStart, t);
        else f.ReadyNs += _region.Overlap(f.PieceStart, t);
        f.OffCpu = f.Blocked = f.WokenEarly = false;
        f.PieceStart = t;
    }

    private void Close(int tid, InFlight f, long t)
    {
        if (f.OffCpu)
        {
            // Its own exit shows it running, but no switch named it: the switch-in was not logged (ThreadAccounting
            // repaired it).
            var back =
                _accounting.TryGetRunningSince(tid, out var since) && since >= f.PieceStart && since <= t ? since : t;
            BackOnCpu(f, back);
            f.PieceStart = back;
        }
        f.CpuNs += _region.Overlap(f.PieceStart, t);
        f.Active = false;
        var total = _region.Overlap(f.EnterTs, t);
        if (total == 0 && !_region.Contains(t)) return;

        var s = f.Stats ??= Stats(tid);
        var sc = f.LastSyscall;
        if (sc is null || sc.Key != f.Key)
        {
            if (!s.BySyscall.TryGetValue(f.Key, out sc)) s.BySyscall[f.Key] = sc = new SyscallStats(f.Key);
            f.LastSyscall = sc;
        }
        // The thread's totals are the sums of these, added up once at the end (ThreadKernelStats.SumSyscalls).
        sc.Calls++;
        sc.TotalNs += total;
        sc.CpuNs += f.CpuNs;
        sc.BlockedNs += f.BlockedNs;
        sc.ReadyNs += f.ReadyNs;
        if (f.WentOffCpu) sc.OffCpuCalls++;
    }

    public void OnRegionBegin()
    {
        foreach (var s in _threads.Values) s.Reset();
        // Pieces of in-flight syscalls that closed before the region are not part of it; open pieces are clipped later.
        foreach (var (_, f) in _inFlight.InOrder) f.CpuNs = f.BlockedNs = f.ReadyNs = 0;
        UnmatchedExits = 0;
    }

    /// <summary>
    /// Syscalls still in progress at the end (e.g. the main thread's join) count with their part inside the region.
    /// </summary>
    public void Complete(long end)
    {
        BoundaryNs = _gaps.Count >= MinBoundarySamples ? _gaps.Percentile(1) : 0;
        BoundaryAfterOffCpuNs =
            _gapsAfterOffCpu.Count >= MinBoundarySamples ? _gapsAfterOffCpu.Percentile(1) : BoundaryNs;
        foreach (var (tid, f) in _inFlight.InOrder)
        {
            if (!f.Active || f.EnterTs > end) continue;
            if (f.OffCpu)
            {
                // Still off CPU at the end: close the off-CPU piece there, not at a switch-in that never came.
                if (f.Blocked) f.BlockedNs += _region.Overlap(f.PieceStart, end);
                else f.ReadyNs += _region.Overlap(f.PieceStart, end);
                f.OffCpu = false;
                f.PieceStart = end;
            }
            Close(tid, f, end);
        }
        foreach (var s in _threads.Values) s.SumSyscalls();
    }
}
