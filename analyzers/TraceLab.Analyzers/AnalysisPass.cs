using System.Runtime.CompilerServices;
using TraceLab.Analyzers.Kernel;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Smp;
using TraceLab.Analyzers.Wakeups;
using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// Runs <see cref="ThreadAccounting"/> and any number of <see cref="IKernelAnalyzer"/>s over one stream of events:
/// one pass, one measured region, the region-begin reset delivered to all of them at the same event.
/// </summary>
/// <remarks>
/// The pass switches on the event's kind once and calls the built-in analyzers (kernel, convoy, wakeup, SMP) through
/// their per-kind entry points, as direct calls on their concrete types: an analyzer costs nothing for a kind it does
/// not use, and the kind is not decided again (an unpredictable branch) in every analyzer. Any other analyzer gets
/// every event through <see cref="IKernelEventSink.OnEvent"/> after the built-in ones, in the order given. The
/// analyzers are independent of one another (each reads only the accounting, which sees the event first), so the
/// order among the built-in ones does not matter.
/// </remarks>
public sealed class AnalysisPass : IKernelEventSink
{
    private readonly IKernelAnalyzer[] _analyzers;
    private readonly ThreadAccounting _accounting;
    private readonly KernelTimeAnalyzer? _kernel;
    private readonly ConvoyAnalyzer? _convoys;
    private readonly WakeupAnalyzer? _wakeups;
    private readonly SmpAnalyzer? _smp;
    /// <summary>Analyzers without per-kind entry points, in the order given.</summary>
    private readonly IKernelAnalyzer[] _others;

    public AnalysisPass(ThreadAccounting accounting, params IKernelAnalyzer[] analyzers)
    {
        Accounting = _accounting = accounting;
        _analyzers = analyzers;
        var others = new List<IKernelAnalyzer>();
        foreach (var a in analyzers)
        {
            // Each built-in type at most once through its fast path; a second instance runs as any other analyzer.
            switch (a)
            {
                case KernelTimeAnalyzer k when _kernel is null: _kernel = k; break;
                case ConvoyAnalyzer c when _convoys is null: _convoys = c; break;
                case WakeupAnalyzer w when _wakeups is null: _wakeups = w; break;
                case SmpAnalyzer s when _smp is null: _smp = s; break;
                default: others.Add(a); break;
            }
        }
        _others = [.. others];
        _hasBuiltIns = _kernel is not null || _convoys is not null || _wakeups is not null || _smp is not null;
    }

    /// <summary>False when only the accounting (and other analyzers) run: no per-kind dispatch to do.</summary>
    private readonly bool _hasBuiltIns;

    private void OnAccountingOnly(in KernelEvent e)
    {
        if (e.Kind != KernelEventKind.Marker)
        {
            _accounting.OnEvent(e);
            return;
        }
        var openings = _accounting.Region.Openings;
        _accounting.OnEvent(e);
        if (openings != _accounting.Region.Openings)
            foreach (var analyzer in _analyzers) analyzer.OnRegionBegin();
    }

    public ThreadAccounting Accounting { get; }
    public MeasuredRegion Region => Accounting.Region;

    public void OnEvent(in KernelEvent e)
    {
        // Compares in order of frequency rather than a jump table: in a lock-heavy trace two thirds of the events are
        // syscall entries and exits, and a taken/not-taken branch predicts better than an indirect jump.
        var kind = e.Kind;
        if (!_hasBuiltIns) OnAccountingOnly(e);
        else if (kind == KernelEventKind.SyscallEnter) OnSyscallEnter(e);
        else if (kind == KernelEventKind.SyscallExit) OnSyscallExit(e);
        else if (kind == KernelEventKind.Switch) OnSwitch(e);
        else if (kind == KernelEventKind.Waking) OnWaking(e);
        else OnOtherKind(e);

        // One call site per position: each stays monomorphic (a cheap interface dispatch), where a single loop call
        // site sees every analyzer type and pays the polymorphic resolve on every event.
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

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void OnSyscallEnter(in KernelEvent e)
    {
        // The accounting's fast path means an event was handled on this CPU before: the SMP analyzer has already
        // marked it seen, which is all it does for a syscall.
        if (!_accounting.OnEvidenceOnly(e)) _smp?.OnCpuEvent(e.Cpu);
        var slot = _accounting.PidSlot;
        _kernel?.OnSyscallEnter(e, slot);
        _convoys?.OnSyscallEnter(e, slot);
        _wakeups?.OnSyscallEnter(e, slot);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void OnSyscallExit(in KernelEvent e)
    {
        if (!_accounting.OnEvidenceOnly(e)) _smp?.OnCpuEvent(e.Cpu);
        var slot = _accounting.PidSlot;
        _kernel?.OnSyscallExit(e, slot);
        _convoys?.OnSyscallExit(e, slot);
        _wakeups?.OnThreadEvidence(e, slot);
    }

    private void OnSwitch(in KernelEvent e)
    {
        _accounting.OnSwitchEvent(e);
        var prev = _accounting.PrevSlot;
        var next = _accounting.NextSlot;
        _kernel?.OnSwitch(e, prev, next);
        _convoys?.OnSwitch(e, prev, next);
        _wakeups?.OnSwitch(e, prev, next);
        _smp?.OnSwitch(e);
    }

    private void OnWaking(in KernelEvent e)
    {
        _accounting.OnWakingEvent(e);
        var pid = _accounting.PidSlot;
        var woken = _accounting.WokenSlot;
        _kernel?.OnWaking(e, woken);
        _convoys?.OnWaking(e, pid, woken);
        _wakeups?.OnWakingEvent(e, pid, woken);
        _smp?.OnWaking(e, pid, woken);
    }

    private void OnOtherKind(in KernelEvent e)
    {
        switch (e.Kind)
        {
            case KernelEventKind.Other:
            case KernelEventKind.Exec:
                if (!_accounting.OnEvidenceOnly(e)) _smp?.OnCpuEvent(e.Cpu);
                _wakeups?.OnThreadEvidence(e, _accounting.PidSlot);
                break;
            case KernelEventKind.Marker:
            {
                var openings = _accounting.Region.Openings;
                _accounting.OnModelled(e);
                if (openings != _accounting.Region.Openings)
                    foreach (var analyzer in _analyzers) analyzer.OnRegionBegin();
                _wakeups?.OnThreadEvidence(e, _accounting.PidSlot);
                _smp?.OnCpuEvent(e.Cpu);
                break;
            }
            default:
                // WakeupNew, Migrate, Fork, Exit and kinds added later: rare, through each analyzer's own switch.
                _accounting.OnModelled(e);
                _kernel?.OnEvent(e);
                _convoys?.OnEvent(e);
                _wakeups?.OnEvent(e);
                _smp?.OnEvent(e);
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
