using Microsoft.Diagnostics.Tracing.Parsers;

namespace TraceLab.Capture.Windows;

/// <summary>
/// The ETW session operations a capture needs, so the cleanup and accounting logic around them is tested with a
/// fake on any OS; <see cref="TraceEventSessionController"/> does them for real on Windows.
/// </summary>
public interface IEtwSessionController
{
    /// <summary>Whether this process may start kernel sessions (Administrator).</summary>
    bool IsElevated();

    /// <summary>Names of every ETW session running on the machine.</summary>
    IReadOnlyList<string> ActiveSessionNames();

    /// <summary>Stops the named session; false when it was not running (any more).</summary>
    bool StopSession(string name);

    /// <summary>
    /// Starts a kernel session (system-logger mode) writing <see cref="EtwSessionSettings.EtlPath"/>.
    /// </summary>
    IEtwRecordingSession Start(EtwSessionSettings settings);
}

/// <summary>A session being recorded into an .etl file.</summary>
public interface IEtwRecordingSession : IDisposable
{
    string Name { get; }

    /// <summary>What the session could not set up but recorded anyway without (e.g. the markers provider).</summary>
    IReadOnlyList<string> Notes { get; }

    /// <summary>Events the session could not put into a buffer so far (ETW's EventsLost).</summary>
    int EventsLost { get; }

    /// <summary>Flushes and stops the session; the .etl file is complete afterwards. Idempotent.</summary>
    void Stop();
}

/// <param name="Name">Session name (see <see cref="EtwSessionName"/>).</param>
/// <param name="EtlPath">File the session writes while it runs.</param>
/// <param name="Keywords">Kernel keywords (<see cref="EtwKernelKeywords.For"/>).</param>
/// <param name="StackKeywords">Events that also log a stack.</param>
/// <param name="BufferSizeMb">Buffer memory for the session.</param>
/// <param name="UserProviders">User-mode providers captured into the same file (the workload's markers).</param>
public sealed record EtwSessionSettings(
    string Name, string EtlPath, KernelTraceEventParser.Keywords Keywords,
        KernelTraceEventParser.Keywords StackKeywords,
    int BufferSizeMb, IReadOnlyList<Guid> UserProviders);
