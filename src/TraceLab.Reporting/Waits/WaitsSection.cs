namespace TraceLab.Reporting.Waits;

/// <summary>
/// report.json "waits": the reported threads' blocked time by what it waited for (docs/metrics.md#wait-classes),
/// per thread and per process, and by what ended it.
/// </summary>
public sealed class WaitsSection
{
    /// <summary>The classes' names, in the order of every <c>ns</c> array below.</summary>
    public List<string> Classes { get; init; } = [];
    /// <summary>The wake sources' names, in the order of every <c>sourceNs</c> array below.</summary>
    public List<string> Sources { get; init; } = [];
    /// <summary>Whether the trace had syscall events; without them every wait on Linux is "unknown".</summary>
    public bool SawSyscalls { get; init; }
    /// <summary>Blocked time of the reported threads by class, ns.</summary>
    public List<long> Ns { get; init; } = [];
    /// <summary>Blocked time of the reported threads by wake source, ns.</summary>
    public List<long> SourceNs { get; init; } = [];
    /// <summary>Per process of the reported threads, the most lock-blocked first.</summary>
    public List<ProcessWaitsSection> Processes { get; init; } = [];
    /// <summary>Per reported thread that blocked, in tid order.</summary>
    public List<ThreadWaitsSection> Threads { get; init; } = [];
    /// <summary>What the blocking stacks changed (docs/metrics.md#wait-stack-tags); absent without stacks.</summary>
    public WaitStacksSection? Stacks { get; init; }
}

/// <summary>The reported threads' blocked time with a blocking stack, and what the stack tags moved.</summary>
public sealed class WaitStacksSection
{
    /// <summary>Blocked time whose switch-out carried a stack, ns.</summary>
    public long WithStackNs { get; init; }
    /// <summary>Those intervals.</summary>
    public long WithStackWaits { get; init; }
    /// <summary>The part of <see cref="WithStackNs"/> whose stack a tag named, ns.</summary>
    public long TaggedNs { get; init; }
    /// <summary>Time moved from the trace rules' class to a tag's, per (from, to, tag), heaviest first.</summary>
    public List<WaitStackMoveSection> Moves { get; init; } = [];
}

/// <summary>Blocked time a stack tag moved from one class to another.</summary>
public sealed class WaitStackMoveSection
{
    /// <summary>The class the trace's rules gave.</summary>
    public required string From { get; init; }
    /// <summary>The class the tag gives.</summary>
    public required string To { get; init; }
    /// <summary>The tag: the function name pattern it matched on the blocking stack.</summary>
    public required string Tag { get; init; }
    /// <summary>Time moved, ns.</summary>
    public long Ns { get; init; }
    /// <summary>Intervals moved.</summary>
    public long Waits { get; init; }
}

/// <summary>One process's blocked time by class.</summary>
public sealed class ProcessWaitsSection
{
    /// <summary>The process id.</summary>
    public int Pid { get; init; }
    /// <summary>Its name.</summary>
    public required string Name { get; init; }
    /// <summary>Its threads that blocked.</summary>
    public int Threads { get; init; }
    /// <summary>Blocked time by class, ns (order: <see cref="WaitsSection.Classes"/>).</summary>
    public List<long> Ns { get; init; } = [];
    /// <summary>Blocked time by wake source, ns (order: <see cref="WaitsSection.Sources"/>).</summary>
    public List<long> SourceNs { get; init; } = [];
}

/// <summary>One thread's blocked time by class.</summary>
public sealed class ThreadWaitsSection
{
    /// <summary>The thread id.</summary>
    public int Tid { get; init; }
    /// <summary>Its process.</summary>
    public int Pid { get; init; }
    /// <summary>Its name.</summary>
    public required string Name { get; init; }
    /// <summary>Blocked time by class, ns (order: <see cref="WaitsSection.Classes"/>).</summary>
    public List<long> Ns { get; init; } = [];
    /// <summary>Blocked intervals by class (order: <see cref="WaitsSection.Classes"/>).</summary>
    public List<long> Waits { get; init; } = [];
    /// <summary>Blocked time by wake source, ns (order: <see cref="WaitsSection.Sources"/>).</summary>
    public List<long> SourceNs { get; init; } = [];
}
