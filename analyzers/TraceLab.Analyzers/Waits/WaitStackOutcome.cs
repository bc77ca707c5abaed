namespace TraceLab.Analyzers.Waits;

/// <summary>
/// What the blocking stacks did to the wait classes (<see cref="WaitClassAnalyzer.ApplyStackTags"/>), per thread:
/// how much blocked time had a stack, how much of it a tag named, and what moved from one class to another.
/// </summary>
/// <param name="Threads">Per thread with a stacked interval: its figures.</param>
/// <param name="Moves">Time a tag moved out of the class the trace's rules gave, per thread.</param>
public sealed record WaitStackOutcome(IReadOnlyDictionary<int, WaitStackFigures> Threads,
    IReadOnlyList<WaitStackMove> Moves);

/// <summary>One thread's blocked time with a stack.</summary>
/// <param name="WithStackNs">Classified blocked time whose switch-out carried a stack, ns.</param>
/// <param name="WithStackWaits">Those intervals.</param>
/// <param name="TaggedNs">The part of <paramref name="WithStackNs"/> whose stack a tag named, ns.</param>
public readonly record struct WaitStackFigures(long WithStackNs, long WithStackWaits, long TaggedNs);

/// <summary>Blocked time of one thread a stack tag moved from one class to another.</summary>
/// <param name="Tid">The thread.</param>
/// <param name="From">The class the trace's rules gave.</param>
/// <param name="To">The tag's class.</param>
/// <param name="Tag">The tag's pattern (the function it names).</param>
/// <param name="Ns">Time moved, ns.</param>
/// <param name="Waits">Intervals moved.</param>
public sealed record WaitStackMove(int Tid, WaitClass From, WaitClass To, string Tag, long Ns, long Waits);
