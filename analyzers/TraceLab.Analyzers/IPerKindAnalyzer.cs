using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>The entry points an <see cref="IPerKindAnalyzer"/> wants <see cref="AnalysisPass"/> to call.</summary>
[Flags]
public enum PerKindEvents
{
    None = 0,
    SyscallEnter = 1,
    SyscallExit = 2,
    Switch = 4,
    Waking = 8,
    /// <summary>Other, Exec and Marker events: evidence that the logging thread runs.</summary>
    ThreadEvidence = 16,
    /// <summary>See <see cref="IPerKindAnalyzer.OnCpuEvidence"/>.</summary>
    CpuEvidence = 32,
    /// <summary>Syscall entries and exits, switches and wakings: what the lock and kernel-time analyses
    /// follow.</summary>
    SyscallsAndScheduling = SyscallEnter | SyscallExit | Switch | Waking,
}

/// <summary>
/// An analyzer with per-kind entry points: <see cref="AnalysisPass"/> switches on the event's kind once and calls only
/// the analyzers that asked for that kind (<see cref="Wants"/>), with the slots the accounting resolved, so an analyzer
/// costs nothing for a kind it does not use and does not decide the kind again. The rare kinds (WakeupNew, Migrate,
/// Fork, Exit, kinds added later) still arrive through <see cref="IKernelEventSink.OnEvent"/>, and so does every event
/// when the analyzer runs outside a pass. An analyzer that only implements <see cref="IKernelAnalyzer"/> gets every
/// event through <see cref="IKernelEventSink.OnEvent"/>.
/// </summary>
public interface IPerKindAnalyzer : IKernelAnalyzer
{
    /// <summary>
    /// The entry points below that this analyzer implements; read once when the pass is built. None: the analyzer
    /// reads only the accounting once the pass is over, and the pass calls none of its event methods
    /// (<see cref="IKernelEventSink.OnEvent"/> included), only <see cref="IKernelAnalyzer.OnRegionBegin"/> and
    /// <see cref="IKernelAnalyzer.Complete"/>.
    /// </summary>
    PerKindEvents Wants { get; }

    void OnSyscallEnter(in KernelEvent e, in EventSlots slots) { }

    void OnSyscallExit(in KernelEvent e, in EventSlots slots) { }

    void OnSwitch(in KernelEvent e, in EventSlots slots) { }

    /// <summary>A Waking event (WakeupNew goes through <see cref="IKernelEventSink.OnEvent"/>).</summary>
    void OnWaking(in KernelEvent e, in EventSlots slots) { }

    /// <summary>An Other, Exec or Marker event: only evidence that its logging thread runs.</summary>
    void OnThreadEvidence(in KernelEvent e, in EventSlots slots) { }

    /// <summary>
    /// An event of a kind without an entry point above was logged on <paramref name="cpu"/>. Skipped for a syscall,
    /// Other or Exec event when the accounting already knew the thread running there (the CPU was seen before).
    /// </summary>
    void OnCpuEvidence(int cpu) { }
}

/// <summary>An <see cref="IPerKindAnalyzer"/>'s entry points, called for one event outside a pass.</summary>
public static class PerKindEntryPoints
{
    /// <summary>
    /// For an analyzer's own <see cref="IKernelEventSink.OnEvent"/> (run outside <see cref="AnalysisPass"/>, or
    /// given a rare kind by it): calls the entry point of <paramref name="e"/>'s kind, when the analyzer
    /// <see cref="IPerKindAnalyzer.Wants"/> it, with the slots the accounting would have resolved. False for the
    /// kinds without an entry point (WakeupNew, Migrate, Fork, Exit), which the analyzer handles itself.
    /// </summary>
    public static bool Dispatch(IPerKindAnalyzer analyzer, in KernelEvent e, ThreadSlots threads)
    {
        var wants = analyzer.Wants;
        switch (e.Kind)
        {
            case KernelEventKind.SyscallEnter:
                if ((wants & PerKindEvents.SyscallEnter) != 0) analyzer.OnSyscallEnter(e, PidSlots(e, threads));
                return true;
            case KernelEventKind.SyscallExit:
                if ((wants & PerKindEvents.SyscallExit) != 0) analyzer.OnSyscallExit(e, PidSlots(e, threads));
                return true;
            case KernelEventKind.Switch:
                if ((wants & PerKindEvents.Switch) != 0)
                {
                    analyzer.OnSwitch(e, EventSlots.OfSwitch(threads.SlotOfThread(e.PrevTid),
                        threads.SlotOfThread(e.NextTid)));
                }
                return true;
            case KernelEventKind.Waking:
                if ((wants & PerKindEvents.Waking) != 0)
                {
                    analyzer.OnWaking(e, EventSlots.OfWaking(threads.SlotOfThread(e.CurrentTid),
                        threads.SlotOfThread(e.WokenTid)));
                }
                return true;
            case KernelEventKind.Other:
            case KernelEventKind.Exec:
            case KernelEventKind.Marker:
                if ((wants & PerKindEvents.ThreadEvidence) != 0) analyzer.OnThreadEvidence(e, PidSlots(e, threads));
                return true;
            default:
                return false;
        }
    }

    private static EventSlots PidSlots(in KernelEvent e, ThreadSlots threads) =>
        EventSlots.OfPid(threads.SlotOfThread(e.CurrentTid));
}
