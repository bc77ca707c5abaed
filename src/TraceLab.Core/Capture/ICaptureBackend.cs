namespace TraceLab.Core.Capture;

/// <summary>
/// A way to record a kernel trace on this OS (tracefs on Linux, ETW on Windows). The trace command only talks to
/// this interface, so the run/stop/commit sequence is the same whatever records the events.
/// </summary>
public interface ICaptureBackend
{
    /// <summary>"tracefs" or "etw", as in <see cref="TraceInfo.Backend"/>.</summary>
    string Name { get; }

    /// <summary>The trace file a finished capture is committed as ("trace.dat", "trace.etl").</summary>
    string TraceFileName { get; }

    /// <summary>How to open the committed trace with the platform's own tools (one line for the user).</summary>
    string OpenHint(string traceFile);

    /// <summary>
    /// Throws <see cref="CaptureUnavailableException"/> (one actionable line) when capture cannot work here.
    /// </summary>
    void EnsureAvailable();

    /// <summary>Starts recording; the caller disposes the session whatever happens.</summary>
    ICaptureSession Start(CaptureRequest request);
}

/// <summary>
/// One running capture. Disposing it always releases the kernel state it created (instance, session).
/// </summary>
public interface ICaptureSession : IDisposable
{
    /// <summary>
    /// Marker file handed to the workload (tracefs trace_marker); null when the workload logs markers itself (ETW
    /// provider).
    /// </summary>
    string? MarkerPath { get; }

    /// <summary>
    /// Writes <paramref name="text"/> as a marker event into the capture, where a trace's reader sees it as the
    /// workload's markers (tracefs: a write to trace_marker; ETW: an event of the workload marker provider the session
    /// records). False when the marker could not be written (the capture itself is unaffected).
    /// </summary>
    bool WriteMarker(string text);

    /// <summary>
    /// What was cleaned up before the capture started (stale instances or sessions of TraceLab runs that died).
    /// </summary>
    IReadOnlyList<string> Notices { get; }

    /// <summary>Events asked for that this kernel does not have (skipped with a warning).</summary>
    IReadOnlyList<string> MissingEvents { get; }

    /// <summary>Cancelled when recording fails while the workload runs (e.g. disk full): the run should stop.</summary>
    CancellationToken Failed { get; }

    /// <summary>Bytes recorded so far, for progress display.</summary>
    long BytesCaptured { get; }

    /// <summary>Throws the recording failure behind <see cref="Failed"/>, if any.</summary>
    void ThrowIfFailed();

    /// <summary>Stops recording; the result is then written out (or discarded) by the caller.</summary>
    ICapturedTrace Stop();
}

/// <summary>A stopped capture, not yet committed to its final file.</summary>
public interface ICapturedTrace
{
    /// <summary>
    /// Notes for the user about the recording (events lost by the session, a merge that was not possible).
    /// </summary>
    IReadOnlyList<string> Notes { get; }

    /// <summary>Writes the trace file to <paramref name="path"/> (a temporary name the caller renames).</summary>
    void WriteTo(string path);

    /// <summary>
    /// Deletes whatever the capture left in its work directory; safe to call after <see cref="WriteTo"/>.
    /// </summary>
    void Discard();
}
