namespace TraceLab.Core;

/// <summary>
/// Keeps the events a reader hands to analysis threads, a batch at a time, as the hand-off holds them: packed
/// (<see cref="KernelEventPacking"/>) when the reader packed them for the hand-off, else whole. Called on the reading
/// thread, in order, before the batch is handed over; what it is given is only valid during the call. For the first
/// pass's event journal, which then keeps the bytes the reader already packed instead of packing every event again
/// (docs/performance.md#journal-batches).
/// </summary>
public interface IEventBatchRecorder
{
    /// <summary>
    /// <paramref name="count"/> events packed one after another in <paramref name="bytes"/>, their texts by index in
    /// <paramref name="texts"/>.
    /// </summary>
    void Packed(ReadOnlySpan<byte> bytes, int count, ReadOnlySpan<string?> texts);

    /// <summary>Events as they are.</summary>
    void Whole(ReadOnlySpan<KernelEvent> events);
}
