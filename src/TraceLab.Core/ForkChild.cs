namespace TraceLab.Core;

/// <summary>What a <see cref="KernelEventKind.Fork"/> event says the new task is.</summary>
public enum ForkChild : byte
{
    /// <summary>The event does not say (sched_process_fork, ETW thread start): the process model infers it.</summary>
    Unknown = 0,
    /// <summary>A thread of its creator's process (clone with CLONE_THREAD; perf FORK with pid ≠ tid).</summary>
    Thread = 1,
    /// <summary>A process of its own whose pid is its tid (fork, vfork, clone without CLONE_THREAD).</summary>
    Process = 2,
}
