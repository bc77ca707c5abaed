using System.Runtime;

namespace TraceLab.Cli;

/// <summary>
/// The heap of a process that analyzes one trace and exits (`tracelab analyze`): no garbage collection while it
/// allocates what one analysis needs (docs/performance.md#no-gc-region).
/// </summary>
/// <remarks>
/// Such a run allocates a bounded amount once — the pass's state (per thread and object, not per event), then the
/// report — and everything it allocates is either kept to the end or dropped at exit. Its collections reclaimed
/// nearly nothing and cost every time: all of them were full (gen 2) collections, started because a large object (the
/// pass's batch buffers, the journal's block, the report's text) went past the runtime's small large-object budget,
/// not by memory running short (busy perf.data, 72 MB allocated: 2–3 full collections, 13–20 ms of pauses and ~45 ms
/// of a background thread's marking on a 2-CPU machine; a 3.1 M-event perf.data, 39 MB: 3 of them, 51 ms of pauses).
/// A no-GC region of <see cref="Bytes"/> lets the run allocate that much without one; an analysis that allocates more
/// (a trace of very many threads) ends the region there, and collections resume as before. Peak memory grows by what
/// those collections reclaimed (busy perf.data: 119 → 129 MiB peak RSS for the installed tool), within the 150 MiB
/// that a trace may take.
/// </remarks>
internal static class AnalysisHeap
{
    /// <summary>What the region lets the run allocate, large objects included.</summary>
    public const long Bytes = 96L << 20;

    /// <summary>Of <see cref="Bytes"/>, what large objects may take.</summary>
    public const long LargeObjectBytes = 32L << 20;

    /// <summary>
    /// Starts the region, at the start of the process (the heap is nearly empty, so the collection the runtime makes
    /// to start it takes no time); false when the runtime refuses it (a collection then behaves as usual).
    /// </summary>
    public static bool TryReserve()
    {
        if (GCSettings.LatencyMode == GCLatencyMode.NoGCRegion) return false;
        try
        {
            return GC.TryStartNoGCRegion(Bytes, LargeObjectBytes, disallowFullBlockingGC: true);
        }
        catch (Exception ex) when (ex is ArgumentOutOfRangeException or InvalidOperationException)
        {
            return false;
        }
    }
}
