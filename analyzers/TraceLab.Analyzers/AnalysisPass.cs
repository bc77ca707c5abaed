using System.Runtime.CompilerServices;
using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Kernel;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Smp;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Analyzers.Waits;
using TraceLab.Analyzers.Wakeups;
using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// Runs <see cref="ThreadAccounting"/> and any number of <see cref="IKernelAnalyzer"/>s over one stream of events:
/// one pass, one measured region, the region-begin reset delivered to all of them at the same event.
/// </summary>
/// <remarks>
/// The pass switches on the event's kind once and calls each <see cref="IPerKindAnalyzer"/> that wants that kind
/// through its per-kind entry point, with the slots the accounting resolved: an analyzer costs nothing for a kind it
/// does not use, and the kind is not decided again (an unpredictable branch) in every analyzer. Any other analyzer gets
/// every event through <see cref="IKernelEventSink.OnEvent"/> after the per-kind ones, in the order given. The
/// analyzers are independent of one another (each reads only the accounting and its stages, such as the lock-operation
/// tracker, which see the event first), so their order does not matter.
/// <para>
/// The built-in per-kind analyzers (kernel time, convoys, wait classes, wakeups, SMP, findings evidence) are called as
/// direct calls on their sealed types, where the JIT inlines their entry points; through the interface every per-kind
/// entry point costs an indirect call per analyzer per event (`TraceLab.Benchmarks harness`, analysis only: the full
/// set 1-2 ns/event slower through the interface; the Native AOT build, which has no profile to devirtualize with,
/// 169 against 161 ns/event read + all analyses on a syscall-heavy trace.dat when the wait classes and the findings
/// evidence still went through it). Any other <see cref="IPerKindAnalyzer"/> goes through the interface: the contract
/// stays the interface, the typed path is only how the pass calls the ones it ships.
/// </para>
/// </remarks>
// The slots of each event live in a stack struct passed by reference to every analyzer: always written before they
// are read, so zeroing them in every call's prolog (what the IL's localsinit asks for) is wasted work per event.
[SkipLocalsInit]
public sealed class AnalysisPass : IKernelEventSink
{
    private readonly IKernelAnalyzer[] _analyzers;
    private readonly ThreadAccounting _accounting;
    // The typed path: the first instance of each built-in per-kind analyzer (a second one goes through the interface).
    /// <summary>The pass's lock-operation tracker, a stage (ThreadAccounting.Stages): before every analyzer.</summary>
    private readonly LockOperationTracker? _locks;
    private readonly KernelTimeAnalyzer? _kernel;
    private readonly ConvoyAnalyzer? _convoys;
    private readonly WakeupAnalyzer? _wakeups;
    private readonly SmpAnalyzer? _smp;
    private readonly WaitClassAnalyzer? _waits;
    private readonly FindingEvidenceAnalyzer? _evidence;
    /// <summary>Per entry point, the other per-kind analyzers that want it.</summary>
    private readonly IPerKindAnalyzer[] _syscallEnter, _syscallExit, _switch, _waking, _threadEvidence, _cpuEvidence;
    /// <summary>
    /// Every per-kind analyzer, the accounting's stages first: the rare kinds go to their
    /// <see cref="IKernelEventSink.OnEvent"/>.
    /// </summary>
    private readonly IPerKindAnalyzer[] _perKind;
    /// <summary>Analyzers without per-kind entry points, in the order given (the wait-for graph apart).</summary>
    private readonly IKernelAnalyzer[] _others;
    /// <summary>The built-in analyzer without per-kind entry points, called directly before the others.</summary>
    private readonly WaitForGraphAnalyzer? _waitGraph;
    /// <summary>False when only the accounting (and other analyzers) run: no per-kind dispatch to do.</summary>
    private readonly bool _hasPerKind;

    /// <summary>Rewrites the tids of events before anything sees them; null: the events come rewritten.</summary>
    private readonly ThreadInstanceMap? _instances;
    /// <summary>
    /// The <see cref="ThreadInstanceMap.Epoch"/> the accounting's current threads were vouched for at.
    /// </summary>
    private int _instancesEpoch;

    public AnalysisPass(ThreadAccounting accounting, params IKernelAnalyzer[] analyzers)
        : this(accounting, null, analyzers)
    {
    }

    /// <param name="accounting">The pass's scheduler accounting, which every analyzer reads.</param>
    /// <param name="instances">
    /// Gives a thread that reuses an exited thread's tid its own id (<see cref="ThreadInstanceMap"/>) in every event
    /// before the accounting and the analyzers see it; null when the caller passes events already rewritten.
    /// </param>
    /// <param name="analyzers">The analyzers of the pass.</param>
    public AnalysisPass(ThreadAccounting accounting, ThreadInstanceMap? instances, params IKernelAnalyzer[] analyzers)
    {
        Accounting = _accounting = accounting;
        _instances = instances;
        // The stages (state several analyzers build on) see each event first and reset, complete like analyzers.
        _analyzers = [.. accounting.Stages.All, .. analyzers];
        // An analyzer that wants no events (it reads the accounting when the pass is over) is only completed.
        _perKind = [.. _analyzers.OfType<IPerKindAnalyzer>().Where(a => a.Wants != PerKindEvents.None)];
        _waitGraph = analyzers.OfType<WaitForGraphAnalyzer>().FirstOrDefault();
        _others = [.. analyzers.Where(a => a is not IPerKindAnalyzer && a != _waitGraph)];
        _hasPerKind = _perKind.Length > 0;
        const PerKindEvents lockEntries = PerKindEvents.SyscallsAndScheduling;
        var general = new List<IPerKindAnalyzer>();
        foreach (var a in _perKind)
        {
            switch (a)
            {
                case LockOperationTracker l when _locks is null: _locks = Typed(l, lockEntries); break;
                case KernelTimeAnalyzer k when _kernel is null: _kernel = Typed(k, lockEntries); break;
                case ConvoyAnalyzer c when _convoys is null: _convoys = Typed(c, lockEntries); break;
                case WakeupAnalyzer w when _wakeups is null:
                    _wakeups = Typed(w, lockEntries | PerKindEvents.ThreadEvidence);
                    break;
                case SmpAnalyzer m when _smp is null:
                    _smp = Typed(m, PerKindEvents.Switch | PerKindEvents.Waking | PerKindEvents.CpuEvidence);
                    break;
                case WaitClassAnalyzer w when _waits is null: _waits = Typed(w, lockEntries); break;
                case FindingEvidenceAnalyzer f when _evidence is null:
                    _evidence = Typed(f, lockEntries | PerKindEvents.ThreadEvidence);
                    break;
                default: general.Add(a); break;
            }
        }
        IPerKindAnalyzer[] Wanting(PerKindEvents entry) => [.. general.Where(a => (a.Wants & entry) != 0)];
        _syscallEnter = Wanting(PerKindEvents.SyscallEnter);
        _syscallExit = Wanting(PerKindEvents.SyscallExit);
        _switch = Wanting(PerKindEvents.Switch);
        _waking = Wanting(PerKindEvents.Waking);
        _threadEvidence = Wanting(PerKindEvents.ThreadEvidence);
        _cpuEvidence = Wanting(PerKindEvents.CpuEvidence);
    }

    /// <summary>
    /// A built-in analyzer on the typed path, which calls exactly <paramref name="served"/>: a built-in that comes to
    /// want other entry points fails here (every test that runs it) until the typed path below calls them.
    /// </summary>
    private static T Typed<T>(T analyzer, PerKindEvents served) where T : IPerKindAnalyzer =>
        analyzer.Wants == served
            ? analyzer
            : throw new InvalidOperationException(
                $"{typeof(T).Name} wants {analyzer.Wants}, AnalysisPass's typed path calls {served}");

    public ThreadAccounting Accounting { get; }

    /// <summary>Whether <paramref name="analyzer"/> is one of this pass's (its accounting's stages too).</summary>
    public bool Runs(IKernelAnalyzer analyzer) => Array.IndexOf(_analyzers, analyzer) >= 0;

    public MeasuredRegion Region => Accounting.Region;

    // Never inlined into its caller: it inlines the per-kind paths and the analyzers' entry points itself, which the
    // JIT stops doing once the inlining budget of the method it compiles is spent.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public void OnEvent(in KernelEvent e)
    {
        // Compares in order of frequency rather than a jump table: in a lock-heavy trace two thirds of the events are
        // syscall entries and exits, and a taken/not-taken branch predicts better than an indirect jump.
        // A syscall of the thread its CPU runs, whose tid still stands for it (most events), needs neither the
        // accounting's slow path nor any tid rewriting: one compare settles both. Other events ask the map first.
        var kind = e.Kind;
        if (kind == KernelEventKind.SyscallEnter && _hasPerKind && _accounting.TryEvidenceOfCurrent(e, out var slots))
            SyscallEnterAnalyzers(e, slots);
        else if (kind == KernelEventKind.SyscallExit && _hasPerKind
            && _accounting.TryEvidenceOfCurrent(e, out slots))
            SyscallExitAnalyzers(e, slots);
        else if (_instances is { } instances && instances.Needs(e))
        {
            Rewrite(instances, e);
            return;
        }
        else Dispatch(e);
        OnOthers(e);
    }

    /// <summary>
    /// The rare event that names an exited or reused tid, copied and rewritten. Out of line: the copy (a struct with a
    /// reference field) would otherwise be zeroed in <see cref="OnEvent"/>'s frame on every event.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Rewrite(ThreadInstanceMap instances, in KernelEvent e)
    {
        var rewritten = e;
        instances.Rewrite(ref rewritten);
        if (instances.Epoch != _instancesEpoch)
        {
            _instancesEpoch = instances.Epoch;
            _accounting.ForgetCurrentTids();
        }
        Dispatch(rewritten);
        OnOthers(rewritten);
    }

    /// <summary>An event with thread ids, by kind (a syscall here is one the fast path in <see cref="OnEvent"/> could
    /// not settle).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Dispatch(in KernelEvent e)
    {
        var kind = e.Kind;
        if (!_hasPerKind) OnAccountingOnly(e);
        else if (kind == KernelEventKind.SyscallEnter) OnSyscallEnter(e);
        else if (kind == KernelEventKind.SyscallExit) OnSyscallExit(e);
        else if (kind == KernelEventKind.Switch) OnSwitch(e);
        else if (kind == KernelEventKind.Waking) OnWaking(e);
        else OnOtherKind(e);
    }

    /// <summary>The analyzers without per-kind entry points.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void OnOthers(in KernelEvent e)
    {
        // One call site per position: each stays monomorphic (a cheap interface dispatch), where a single loop call
        // site sees every analyzer type and pays the polymorphic resolve on every event.
        _waitGraph?.OnEvent(e);
        var a = _others;
        switch (a.Length)
        {
            case 0: return;
            case 1: a[0].OnEvent(e); return;
            case 2: a[0].OnEvent(e); a[1].OnEvent(e); return;
            default:
                a[0].OnEvent(e); a[1].OnEvent(e);
                for (var i = 2; i < a.Length; i++) a[i].OnEvent(e);
                return;
        }
    }

    private void OnAccountingOnly(in KernelEvent e)
    {
        if (e.Kind != KernelEventKind.Marker)
        {
            _accounting.OnEvent(e);
            return;
        }
        var openings = _accounting.Region.Openings;
        _accounting.OnEvent(e);
        if (openings != _accounting.Region.Openings) RegionBegan();
    }

    private void RegionBegan()
    {
        foreach (var analyzer in _analyzers) analyzer.OnRegionBegin();
    }

    // Out of line: a syscall gets here only when the fast path in OnEvent could not settle it (its thread's switch-in
    // was not logged, or a tid was retired since), and the analyzers' entry points inlined twice in OnEvent would
    // spend its inlining budget.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void OnSyscallEnter(in KernelEvent e)
    {
        if (!_accounting.OnEvidenceOnly(e, out var slots)) CpuEvidence(e.Cpu);
        SyscallEnterAnalyzers(e, slots);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void SyscallEnterAnalyzers(in KernelEvent e, in EventSlots slots)
    {
        _locks?.OnSyscallEnter(e, slots);
        _kernel?.OnSyscallEnter(e, slots);
        _convoys?.OnSyscallEnter(e, slots);
        _wakeups?.OnSyscallEnter(e, slots);
        _waits?.OnSyscallEnter(e, slots);
        _evidence?.OnSyscallEnter(e, slots);
        foreach (var a in _syscallEnter) a.OnSyscallEnter(e, slots);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void OnSyscallExit(in KernelEvent e)
    {
        if (!_accounting.OnEvidenceOnly(e, out var slots)) CpuEvidence(e.Cpu);
        SyscallExitAnalyzers(e, slots);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void SyscallExitAnalyzers(in KernelEvent e, in EventSlots slots)
    {
        _locks?.OnSyscallExit(e, slots);
        _kernel?.OnSyscallExit(e, slots);
        _convoys?.OnSyscallExit(e, slots);
        _wakeups?.OnSyscallExit(e, slots);
        _waits?.OnSyscallExit(e, slots);
        _evidence?.OnSyscallExit(e, slots);
        foreach (var a in _syscallExit) a.OnSyscallExit(e, slots);
    }

    private void OnSwitch(in KernelEvent e)
    {
        var slots = _accounting.OnSwitchEvent(e);
        _locks?.OnSwitch(e, slots);
        _kernel?.OnSwitch(e, slots);
        _convoys?.OnSwitch(e, slots);
        _wakeups?.OnSwitch(e, slots);
        _smp?.OnSwitch(e, slots);
        _waits?.OnSwitch(e, slots);
        _evidence?.OnSwitch(e, slots);
        foreach (var a in _switch) a.OnSwitch(e, slots);
    }

    private void OnWaking(in KernelEvent e)
    {
        var slots = _accounting.OnWakingEvent(e);
        _locks?.OnWaking(e, slots);
        _kernel?.OnWaking(e, slots);
        _convoys?.OnWaking(e, slots);
        _wakeups?.OnWaking(e, slots);
        _smp?.OnWaking(e, slots);
        _waits?.OnWaking(e, slots);
        _evidence?.OnWaking(e, slots);
        foreach (var a in _waking) a.OnWaking(e, slots);
    }

    /// <summary>Rare: a CPU the accounting's fast path could not vouch for.</summary>
    private void CpuEvidence(int cpu)
    {
        _smp?.OnCpuEvidence(cpu);
        foreach (var a in _cpuEvidence) a.OnCpuEvidence(cpu);
    }

    private void ThreadEvidence(in KernelEvent e, in EventSlots slots)
    {
        _wakeups?.OnThreadEvidence(e, slots);
        _evidence?.OnThreadEvidence(e, slots);
        foreach (var a in _threadEvidence) a.OnThreadEvidence(e, slots);
    }

    private void OnOtherKind(in KernelEvent e)
    {
        switch (e.Kind)
        {
            case KernelEventKind.Other:
            case KernelEventKind.Exec:
                {
                    if (!_accounting.OnEvidenceOnly(e, out var slots)) CpuEvidence(e.Cpu);
                    ThreadEvidence(e, slots);
                    break;
                }
            case KernelEventKind.Marker:
                {
                    var openings = _accounting.Region.Openings;
                    var slots = _accounting.OnModelled(e);
                    if (openings != _accounting.Region.Openings) RegionBegan();
                    ThreadEvidence(e, slots);
                    CpuEvidence(e.Cpu);
                    break;
                }
            default:
                // WakeupNew, Migrate, Fork, Exit and kinds added later: rare, through each analyzer's own switch.
                _accounting.OnModelled(e);
                foreach (var a in _perKind) a.OnEvent(e);
                break;
        }
    }

    /// <summary>Closes every analysis at the region's end (or the last event's time). Call once.</summary>
    public void Complete()
    {
        Accounting.Complete();
        var end = Accounting.Region.HasEnd ? Accounting.Region.End : Accounting.LastTimestamp;
        foreach (var a in _analyzers) a.Complete(end);
    }
}
