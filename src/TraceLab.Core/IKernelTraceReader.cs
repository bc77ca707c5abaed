namespace TraceLab.Core;

/// <summary>
/// A trace file or capture read as one time-ordered stream of <see cref="KernelEvent"/>s.
/// <see cref="Read"/> streams every event exactly once.
/// </summary>
public interface IKernelTraceReader : IDisposable
{
    /// <summary>
    /// What the trace says as a whole. Never written to once handed out: once open, what the file's header says;
    /// after <see cref="Read"/>, a new, complete value that adds what only the events tell (their count, first and
    /// last timestamps, unknown events, losses counted in the stream, damage a salvaging read skipped).
    /// </summary>
    TraceInfo Info { get; }

    /// <summary>Thread names known to the trace (updated while reading, as comm fields are seen).</summary>
    ThreadTable Threads { get; }

    /// <summary>Streams all events in timestamp order (per-CPU streams merged) into <paramref name="sink"/>.</summary>
    void Read(IKernelEventSink sink, CancellationToken cancellationToken = default);
}
