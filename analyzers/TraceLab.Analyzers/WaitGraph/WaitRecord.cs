namespace TraceLab.Analyzers.WaitGraph;

/// <summary>One completed wait of a thread: blocking switch-out at <see cref="Start"/>, ended by <see cref="Waker"/> at <see cref="End"/>.</summary>
internal readonly record struct WaitRecord(long Start, long End, int Waker);
