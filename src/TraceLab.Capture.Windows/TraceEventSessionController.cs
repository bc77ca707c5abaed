using System.Runtime.Versioning;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Session;

namespace TraceLab.Capture.Windows;

/// <summary>ETW sessions through TraceEvent's <see cref="TraceEventSession"/> (advapi32: Windows only).</summary>
[SupportedOSPlatform("windows")]
public sealed class TraceEventSessionController : IEtwSessionController
{
    public bool IsElevated() => TraceEventSession.IsElevated() == true;

    public IReadOnlyList<string> ActiveSessionNames() => TraceEventSession.GetActiveSessionNames();

    public bool StopSession(string name)
    {
        using var session = TraceEventSession.GetActiveSession(name);
        if (session is null) return false;
        return session.Stop();
    }

    public IEtwRecordingSession Start(EtwSessionSettings settings)
    {
        // A name other than "NT Kernel Logger" makes TraceEvent start the kernel provider in system-logger mode
        // (Windows 8+): several such sessions can run at once, and the same session can also take user providers.
        var session = new TraceEventSession(settings.Name, settings.EtlPath, TraceEventSessionOptions.Create)
        {
            BufferSizeMB = settings.BufferSizeMb,
            // Sessions outlive their process; this one must not outlive the run (a kill is handled by the stale sweep).
            StopOnDispose = true,
        };
        try
        {
            session.EnableKernelProvider(settings.Keywords, settings.StackKeywords);
            var notes = new List<string>();
            foreach (var provider in settings.UserProviders)
            {
                // Without markers the report covers the whole trace; that is worth a warning, not a failed run.
                try { session.EnableProvider(provider, TraceEventLevel.Verbose, ulong.MaxValue); }
                catch (Exception ex) when (ex is NotSupportedException or System.Runtime.InteropServices.COMException
                                           or UnauthorizedAccessException)
                {
                    notes.Add($"provider {provider} (workload markers) could not be enabled in the kernel session "
                        + $"({ex.Message}): the report covers the whole trace");
                }
            }
            return new Recording(session, notes);
        }
        catch
        {
            session.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Adds image identities and rundown (KernelTraceControl.dll) so WPA resolves symbols on another machine.
    /// Throws when the native helper is not there; the caller then keeps the unmerged file.
    /// </summary>
    public static void Merge(string input, string output) =>
        TraceEventSession.Merge([input], output, TraceEventMergeOptions.Compress);

    private sealed class Recording(TraceEventSession session, IReadOnlyList<string> notes) : IEtwRecordingSession
    {
        private bool _stopped;

        public IReadOnlyList<string> Notes => notes;

        public string Name => session.SessionName;
        public int EventsLost => session.EventsLost;

        public void Stop()
        {
            if (_stopped) return;
            _stopped = true;
            session.Flush();
            session.Stop();
        }

        public void Dispose()
        {
            try { Stop(); }
            finally { session.Dispose(); }
        }
    }
}
