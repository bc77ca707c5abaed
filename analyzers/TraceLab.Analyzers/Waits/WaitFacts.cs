namespace TraceLab.Analyzers.Waits;

/// <summary>
/// What the trace tells about one blocked interval, without stacks: the syscall open at the switch-out, the task
/// state, the wakeup's source and the syscall's result. The input of <see cref="WaitClassifier.Classify"/>.
/// </summary>
/// <param name="Call">Family of the syscall open at the switch-out.</param>
/// <param name="Uninterruptible">Switched out in TASK_UNINTERRUPTIBLE (D): disk and kernel-internal waits.</param>
/// <param name="Source">What ended the interval.</param>
/// <param name="HasResult">The syscall's exit was seen after the interval (its <paramref name="Result"/> is
/// known).</param>
/// <param name="Result">The syscall's return value (a negative errno on failure).</param>
/// <param name="WaitReason">Backend wait reason (ETW KWAIT_REASON); -1 when the backend has none (Linux).</param>
public readonly record struct WaitFacts(
    WaitCall Call, bool Uninterruptible, WakeSource Source, bool HasResult, long Result, int WaitReason = -1);
