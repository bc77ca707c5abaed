namespace TraceLab.Reporting.Stacks;

/// <summary>
/// report.json "stacks": the call stacks of a trace recorded with them (docs/report-schema.md#stacks).
/// </summary>
public sealed class StacksSection
{
    /// <summary>Events that carried a stack.</summary>
    public long EventsWithStacks { get; init; }
    /// <summary>Distinct stacks (per process).</summary>
    public int DistinctStacks { get; init; }
    /// <summary>Frames of the reported stacks, and how many of them have no function name.</summary>
    public long Frames { get; init; }
    /// <summary>Frames named only module+offset or [unknown] (docs/metrics.md#unsymbolized-frames).</summary>
    public long UnsymbolizedFrames { get; init; }
    /// <summary>Callchains cut short by damage (kept up to the damage).</summary>
    public long TruncatedStacks { get; init; }
    /// <summary>User stacks unwound from copied stacks (perf --call-graph dwarf); null when none were.</summary>
    public long? UnwoundStacks { get; init; }
    /// <summary>Of those, the ones that stopped before the outermost frame; null when none were unwound.</summary>
    public long? UnwoundShort { get; init; }
    /// <summary>Hard-interrupt wakeups left out of the releasing stacks.</summary>
    public long InterruptWakeups { get; init; }
    /// <summary>
    /// Where the stacks came from when a second recording beside the trace held them (<c>trace --stacks</c>) and how
    /// its events were joined to the trace's (docs/metrics.md#stack-join); null when the trace held its own.
    /// </summary>
    public TraceLab.Formats.StackJoin.StackJoinSummary? StackFile { get; init; }
    /// <summary>What symbolization could not use, each said once.</summary>
    public List<string> Notes { get; init; } = [];
    /// <summary>Every lock word with a futex wait or wake, by time waited.</summary>
    public List<LockStacksEntry> Locks { get; init; } = [];
    /// <summary>Off-CPU time per blocking stack (every process), by time.</summary>
    public List<StackEntry> OffCpu { get; init; } = [];

    /// <summary>
    /// This section with only the locks and off-CPU stacks of the processes the report is about (TraceLab's own, the
    /// ones `--exclude-pid` left out and, with a target, the rest of the system dropped); itself when all are kept.
    /// </summary>
    public StacksSection Of(Func<int, bool> reported)
    {
        if (Locks.TrueForAll(l => reported(l.Process)) && OffCpu.TrueForAll(o => reported(o.Process))) return this;
        return new StacksSection
        {
            EventsWithStacks = EventsWithStacks,
            DistinctStacks = DistinctStacks,
            Frames = Frames,
            UnsymbolizedFrames = UnsymbolizedFrames,
            TruncatedStacks = TruncatedStacks,
            UnwoundStacks = UnwoundStacks,
            UnwoundShort = UnwoundShort,
            InterruptWakeups = InterruptWakeups,
            StackFile = StackFile,
            Notes = Notes,
            Locks = Locks.FindAll(l => reported(l.Process)),
            OffCpu = OffCpu.FindAll(o => reported(o.Process)),
        };
    }
}

/// <summary>One lock word: its name, address, and the stacks that wait on it and release it.</summary>
public sealed class LockStacksEntry
{
    /// <summary>The process whose threads use it.</summary>
    public int Process { get; init; }
    /// <summary>The futex word's address, hex.</summary>
    public required string Address { get; init; }
    /// <summary>
    /// The lock's name (docs/metrics.md#lock-name): its variable, else its call site, else the address.
    /// </summary>
    public required string Name { get; init; }
    /// <summary>"variable", "call site" or "address": what <see cref="Name"/> is.</summary>
    public required string NameKind { get; init; }
    /// <summary>The module that defines the variable; null when not a variable.</summary>
    public string? Module { get; init; }
    /// <summary>Futex waits on the word and their time (entry to return), ms.</summary>
    public long Waits { get; init; }
    /// <summary>Milliseconds in those waits.</summary>
    public double WaitMs { get; init; }
    /// <summary>Stacks of the waits, by time.</summary>
    public List<StackEntry> Blocking { get; init; } = [];
    /// <summary>Stacks of the wakes that ended a wait, by the time those waits had lasted.</summary>
    public List<StackEntry> Releasing { get; init; } = [];
}

/// <summary>One stack with its count and time.</summary>
public sealed class StackEntry
{
    /// <summary>The process the stack belongs to.</summary>
    public int Process { get; init; }
    /// <summary>Operations with this stack.</summary>
    public long Count { get; init; }
    /// <summary>Their time, ms.</summary>
    public double Ms { get; init; }
    /// <summary>Innermost first.</summary>
    public List<FrameEntry> Frames { get; init; } = [];
}

/// <summary>One frame: address, module, function and offset (into the function, or the module without one).</summary>
public sealed class FrameEntry
{
    /// <summary>Hex address as recorded.</summary>
    public required string Address { get; init; }
    /// <summary>Module path or pseudo name; "[unknown]" without a mapping.</summary>
    public required string Module { get; init; }
    /// <summary>Function; null when unknown.</summary>
    public string? Symbol { get; init; }
    /// <summary>Hex offset into the function, or into the module's file when there is none.</summary>
    public required string Offset { get; init; }
    /// <summary>Hex address in the module's terms (file offset), as perf script prints it.</summary>
    public string? ModuleOffset { get; init; }
    /// <summary>Source file of the address (the module's DWARF line table); null without debug information.</summary>
    public string? File { get; init; }
    /// <summary>Its line; null without debug information.</summary>
    public int? Line { get; init; }
    /// <summary>
    /// True for a function inlined at the address (the module's DWARF .debug_info; the frames of one address list
    /// the inlined ones first, innermost first, then the function holding them); null for the others.
    /// </summary>
    public bool? Inlined { get; init; }
}
