namespace TraceLab.Core;

/// <summary>
/// A reader of a trace that can hold call stacks (perf.data recorded with <c>perf record -g</c>): the stacks its
/// events refer to (<see cref="KernelEvent.StackId"/>) and the processes' module maps to name their frames.
/// </summary>
public interface IStackTraceReader : IKernelTraceReader
{
    /// <summary>
    /// True when the trace's events may carry stacks (known once open; the table fills while reading).
    /// </summary>
    bool HasStacks { get; }

    /// <summary>The stacks read so far (all of them once <see cref="IKernelTraceReader.Read"/> returns).</summary>
    StackTable Stacks { get; }

    /// <summary>The module maps of every process, over the trace's time.</summary>
    ProcessMaps Maps { get; }

    /// <summary>
    /// Whose stack a context switch carries: false (perf, ftrace) the thread switching out, where it blocks; true
    /// (ETW's CSwitch stack walk) the thread switching in, where it had blocked (WPA's New Thread Stack).
    /// </summary>
    bool SwitchStacksAreOfNextThread => false;

    /// <summary>
    /// What the read could not give a stack (records of no event, references never defined), one line each, said in
    /// the report's stack notes; known once <see cref="IKernelTraceReader.Read"/> returns.
    /// </summary>
    IReadOnlyList<string> StackNotes => [];
}
