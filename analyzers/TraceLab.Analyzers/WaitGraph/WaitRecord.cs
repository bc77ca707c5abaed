namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// One completed wait of a thread: blocking switch-out at <see cref="Start"/>, ended by <see cref="Waker"/> at
/// <see cref="End"/>. <see cref="WakerSlot"/> is the waker's <see cref="ThreadSlots"/> slot when it is a thread (else
/// -1), so cascading through this record finds the waker's state without the tid → slot lookup.
/// </summary>
internal readonly record struct WaitRecord(long Start, long End, int Waker, int WakerSlot);
