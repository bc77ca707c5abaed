namespace TraceLab.Core;

/// <summary>
/// A trace file or capture read as one time-ordered stream of <see cref="KernelEvent"/>s.
/// <see cref="Info"/> is complete once the reader is open; <see cref="Read"/> streams every event exactly once.
/// </summary>
public interface IKernelTraceReader : IDisposable
{
    TraceInfo Info { get; }

    /// <summary>Thread names known to the trace (updated while reading, as comm fields are seen).</summary>
    ThreadTable Threads { get; }

    /// <summary>Streams all events in timestamp order (per-CPU streams merged) into <paramref name="sink"/>.</summary>
    void Read(IKernelEventSink sink, CancellationToken cancellationToken = default);
}
