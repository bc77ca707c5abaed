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
    /// <summary>The entry points below that this analyzer implements; read once when the pass is built.</summary>
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
