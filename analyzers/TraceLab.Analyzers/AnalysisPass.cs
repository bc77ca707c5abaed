using System.Runtime.CompilerServices;
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
/// analyzers are independent of one another (each reads only the accounting, which sees the event first), so their
/// order does not matter.
/// </remarks>
public sealed class AnalysisPass : IKernelEventSink
{
    private readonly IKernelAnalyzer[] _analyzers;
    private readonly ThreadAccounting _accounting;
    /// <summary>Per entry point, the per-kind analyzers that want it.</summary>
    private readonly IPerKindAnalyzer[] _syscallEnter, _syscallExit, _switch, _waking, _threadEvidence, _cpuEvidence;
    /// <summary>Per-kind analyzers: the rare kinds go to their <see cref="IKernelEventSink.OnEvent"/>.</summary>
    private readonly IPerKindAnalyzer[] _perKind;
    /// <summary>Analyzers without per-kind entry points, in the order given.</summary>
    private readonly IKernelAnalyzer[] _others;
    /// <summary>False when only the accounting (and other analyzers) run: no per-kind dispatch to do.</summary>
    private readonly bool _hasPerKind;

    public AnalysisPass(ThreadAccounting accounting, params IKernelAnalyzer[] analyzers)
    {
        Accounting = _accounting = accounting;
        _analyzers = analyzers;
        _perKind = [.. analyzers.OfType<IPerKindAnalyzer>()];
        _others = [.. analyzers.Where(a => a is not IPerKindAnalyzer)];
        _hasPerKind = _perKind.Length > 0;
        IPerKindAnalyzer[] Wanting(PerKindEvents entry) => [.. _perKind.Where(a => (a.Wants & entry) != 0)];
        _syscallEnter = Wanting(PerKindEvents.SyscallEnter);
        _syscallExit = Wanting(PerKindEvents.SyscallExit);
        _switch = Wanting(PerKindEvents.Switch);
        _waking = Wanting(PerKindEvents.Waking);
        _threadEvidence = Wanting(PerKindEvents.ThreadEvidence);
        _cpuEvidence = Wanting(PerKindEvents.CpuEvidence);
    }

    public ThreadAccounting Accounting { get; }
    public MeasuredRegion Region => Accounting.Region;

    public void OnEvent(in KernelEvent e)
    {
        // Compares in order of frequency rather than a jump table: in a lock-heavy trace two thirds of the events are
        // syscall entries and exits, and a taken/not-taken branch predicts better than an indirect jump.
        var kind = e.Kind;
        if (!_hasPerKind) OnAccountingOnly(e);
        else if (kind == KernelEventKind.SyscallEnter) OnSyscallEnter(e);
        else if (kind == KernelEventKind.SyscallExit) OnSyscallExit(e);
        else if (kind == KernelEventKind.Switch) OnSwitch(e);
        else if (kind == KernelEventKind.Waking) OnWaking(e);
        else OnOtherKind(e);

        // One call site per position: each stays monomorphic (a cheap interface dispatch), where a single loop call
        // site sees every analyzer type and pays the polymorphic resolve on every event. The same below.
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
        var hadBegin = _accounting.Region.HasBegin;
        _accounting.OnEvent(e);
        if (!hadBegin && _accounting.Region.HasBegin) RegionBegan();
    }

    private void RegionBegan()
    {
        foreach (var analyzer in _analyzers) analyzer.OnRegionBegin();
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void OnSyscallEnter(in KernelEvent e)
    {
        if (!_accounting.OnEvidenceOnly(e, out var slots)) CpuEvidence(e.Cpu);
        var a = _syscallEnter;
        switch (a.Length)
        {
            case 0: return;
            case 1: a[0].OnSyscallEnter(e, slots); return;
            case 2: a[0].OnSyscallEnter(e, slots); a[1].OnSyscallEnter(e, slots); return;
            case 3: a[0].OnSyscallEnter(e, slots); a[1].OnSyscallEnter(e, slots); a[2].OnSyscallEnter(e, slots); return;
            default:
                a[0].OnSyscallEnter(e, slots); a[1].OnSyscallEnter(e, slots); a[2].OnSyscallEnter(e, slots);
                for (var i = 3; i < a.Length; i++) a[i].OnSyscallEnter(e, slots);
                return;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void OnSyscallExit(in KernelEvent e)
    {
        if (!_accounting.OnEvidenceOnly(e, out var slots)) CpuEvidence(e.Cpu);
        var a = _syscallExit;
        switch (a.Length)
        {
            case 0: return;
            case 1: a[0].OnSyscallExit(e, slots); return;
            case 2: a[0].OnSyscallExit(e, slots); a[1].OnSyscallExit(e, slots); return;
            case 3: a[0].OnSyscallExit(e, slots); a[1].OnSyscallExit(e, slots); a[2].OnSyscallExit(e, slots); return;
            default:
                a[0].OnSyscallExit(e, slots); a[1].OnSyscallExit(e, slots); a[2].OnSyscallExit(e, slots);
                for (var i = 3; i < a.Length; i++) a[i].OnSyscallExit(e, slots);
                return;
        }
    }

    private void OnSwitch(in KernelEvent e)
    {
        var slots = _accounting.OnSwitchEvent(e);
        var a = _switch;
        switch (a.Length)
        {
            case 0: return;
            case 1: a[0].OnSwitch(e, slots); return;
            case 2: a[0].OnSwitch(e, slots); a[1].OnSwitch(e, slots); return;
            case 3: a[0].OnSwitch(e, slots); a[1].OnSwitch(e, slots); a[2].OnSwitch(e, slots); return;
            default:
                a[0].OnSwitch(e, slots); a[1].OnSwitch(e, slots); a[2].OnSwitch(e, slots); a[3].OnSwitch(e, slots);
                for (var i = 4; i < a.Length; i++) a[i].OnSwitch(e, slots);
                return;
        }
    }

    private void OnWaking(in KernelEvent e)
    {
        var slots = _accounting.OnWakingEvent(e);
        var a = _waking;
        switch (a.Length)
        {
            case 0: return;
            case 1: a[0].OnWaking(e, slots); return;
            case 2: a[0].OnWaking(e, slots); a[1].OnWaking(e, slots); return;
            case 3: a[0].OnWaking(e, slots); a[1].OnWaking(e, slots); a[2].OnWaking(e, slots); return;
            default:
                a[0].OnWaking(e, slots); a[1].OnWaking(e, slots); a[2].OnWaking(e, slots); a[3].OnWaking(e, slots);
                for (var i = 4; i < a.Length; i++) a[i].OnWaking(e, slots);
                return;
        }
    }

    /// <summary>Rare: a CPU the accounting's fast path could not vouch for; one loop call site is enough.</summary>
    private void CpuEvidence(int cpu)
    {
        foreach (var a in _cpuEvidence) a.OnCpuEvidence(cpu);
    }

    private void ThreadEvidence(in KernelEvent e, in EventSlots slots)
    {
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
                var hadBegin = _accounting.Region.HasBegin;
                var slots = _accounting.OnModelled(e);
                if (!hadBegin && _accounting.Region.HasBegin) RegionBegan();
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
