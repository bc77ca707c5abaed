using TraceLab.Core;
using TraceLab.Core.Capture;
using TraceLab.Formats.Etw;

namespace TraceLab.Capture.Windows;

/// <summary>
/// One ETW capture: stale TraceLab sessions stopped first, then a kernel session named after this run writing
/// <c>.capture.etl</c> in the run's directory. The kernel copies full buffers to the file while the workload runs;
/// nothing is parsed until the run is over. Disposing always stops the session, whatever happened before; if TraceLab
/// dies instead, its guard process stops the session (<see cref="EtwSessionGuard"/>) and the job it put a built-in
/// workload in kills the workload (<see cref="ICaptureGuard"/>). A user's program is never put in the job.
/// </summary>
public sealed class EtwCaptureSession : ICaptureSession, ILiveCapture, ICaptureGuard
{
    /// <summary>The workload's marker provider ("TraceLab-Workload"), captured into the same file.</summary>
    public static readonly Guid WorkloadProvider = WorkloadMarkers.ProviderGuid;

    private readonly IEtwRecordingSession _recording;
    private readonly Action<string, string> _merge;
    private readonly CancellationTokenSource _failed = new();
    private readonly IEtwGuard? _guard;
    private readonly Func<IProcessJob>? _createJob;
    private readonly object _jobGate = new();
    private IProcessJob? _job;
    private readonly IEtwMarkerWriter? _markers;
    private bool _stopped;
    private bool _handedOver;

    private EtwCaptureSession(IEtwRecordingSession recording, string etlPath, IReadOnlyList<string> notices,
        Action<string, string> merge, IEtwGuard? guard, Func<IProcessJob>? createJob, IEtwMarkerWriter? markers)
    {
        _markers = markers;
        _recording = recording;
        EtlPath = etlPath;
        Notices = notices;
        _merge = merge;
        _guard = guard;
        _createJob = createJob;
    }

    public string SessionName => _recording.Name;
    /// <summary>The file the session writes while it runs (renamed or merged into trace.etl at commit).</summary>
    public string EtlPath { get; }
    public string? MarkerPath => null;

    /// <summary>
    /// TraceLab's own markers (TRACELAB_SELF_PIDS, the target's window) as events of the workload marker provider the
    /// session records, so `analyze` of the .etl leaves TraceLab out as it does on Linux.
    /// </summary>
    public bool WriteMarker(string text) => _markers?.Write(text) ?? false;
    public IReadOnlyList<string> Notices { get; }
    /// <summary>
    /// Kernel keywords cannot be missing the way tracepoints can: an unsupported flag fails the start.
    /// </summary>
    public IReadOnlyList<string> MissingEvents => [];
    public CancellationToken Failed => _failed.Token;

    public long BytesCaptured
    {
        get
        {
            try { return new FileInfo(EtlPath).Length; }
            catch (IOException) { return 0; }
        }
    }

    public static EtwCaptureSession Start(IEtwSessionController controller, CaptureRequest request,
        Func<int, bool> processAlive, Action<string, string> merge, int ownerPid,
        EtwSessionProtection? protection = null)
    {
        var stale = EtwStaleSessions.Stop(controller, processAlive);
        Directory.CreateDirectory(request.WorkDirectory);
        var etl = Path.Combine(request.WorkDirectory, ".capture.etl");
        var settings = new EtwSessionSettings(
            EtwSessionName.For(ownerPid, request.RunId), etl, EtwKernelKeywords.For(request),
                EtwKernelKeywords.StacksFor(request),
            EtwKernelKeywords.BufferSizeMb(request.BufferSizeKb, Environment.ProcessorCount), [WorkloadProvider]);
        // The guard first and told the name before the session exists: no instant in which TraceLab could die and
        // leave the session running.
        var guard = protection?.StartGuard?.Invoke(ownerPid);
        IEtwRecordingSession recording;
        try
        {
            guard?.Watch(settings.Name);
            recording = controller.Start(settings);
        }
        catch (Exception ex) when (ex is UnauthorizedAccessException or System.Runtime.InteropServices.COMException
                                   or NotSupportedException)
        {
            guard?.Dispose();
            TryDelete(etl);
            throw new CaptureUnavailableException($"cannot start ETW kernel session {settings.Name}: {ex.Message}", ex);
        }
        catch
        {
            guard?.Dispose();
            throw;
        }
        return new EtwCaptureSession(recording, etl, [.. stale.Notices, .. recording.Notes], merge, guard,
            protection?.CreateJob, MarkerWriter(protection));
    }

    /// <summary>
    /// The writer of TraceLab's own markers, or null when ETW refuses one: the markers are optional (without them the
    /// report covers the whole trace and names TraceLab's threads), the running session must not be lost over them.
    /// </summary>
    private static IEtwMarkerWriter? MarkerWriter(EtwSessionProtection? protection)
    {
        try
        {
            return protection?.CreateMarkerWriter?.Invoke();
        }
        catch (Exception ex) when (ex is InvalidOperationException or PlatformNotSupportedException
                                   or DllNotFoundException or EntryPointNotFoundException)
        {
            return null;
        }
    }

    /// <summary>
    /// A built-in workload dies with TraceLab: it goes into the kill-on-close job (made on first use), whose only
    /// handle closes when TraceLab exits however it ends.
    /// </summary>
    public void KillWithCapture(int pid)
    {
        if (_createJob is null) return;
        lock (_jobGate)
        {
            _job ??= _createJob();
            _job.Add(pid);
        }
    }

    /// <summary>
    /// Nothing to undo: the job holds the process itself, not its id, so a reused pid can never be killed by it.
    /// </summary>
    public void Release(int pid) { }

    /// <summary>
    /// A second, real-time kernel session named after this one (+"-live", so the stale sweep finds it too); KrabsETW's
    /// managed wrapper would do the same but is not in the package registry.
    /// </summary>
    public IDisposable StartLive(IKernelEventSink sink)
    {
        if (!OperatingSystem.IsWindows())
            throw new CaptureUnavailableException("the ETW real-time view runs on Windows only");
        var name = SessionName + "-live";
        _guard?.Watch(name);
        return new GuardedLive(EtwLiveSession.Start(name, sink), _guard, name);
    }

    /// <summary>The live session, forgotten by the guard once it is stopped.</summary>
    private sealed class GuardedLive(IDisposable live, IEtwGuard? guard, string name) : IDisposable
    {
        public void Dispose()
        {
            live.Dispose();
            guard?.Forget(name);
        }
    }

    /// <summary>ETW writes the file itself; nothing of ours can fail while it runs.</summary>
    public void ThrowIfFailed() { }

    public ICapturedTrace Stop()
    {
        if (_stopped) throw new InvalidOperationException("capture already stopped");
        _stopped = true;
        // Read before stopping: the counter belongs to the running session.
        var lost = _recording.EventsLost;
        _recording.Stop();
        _guard?.Forget(SessionName);
        _handedOver = true;
        return new EtwCapturedTrace(EtlPath, lost, _merge);
    }

    public void Dispose()
    {
        try
        {
            _recording.Dispose();
        }
        finally
        {
            // Closing the guard's pipe: it stops whatever is still watched (a stop above that failed), then exits.
            _guard?.Dispose();
            _markers?.Dispose();
            lock (_jobGate) _job?.Dispose();
            if (!_handedOver) TryDelete(EtlPath);
            _failed.Dispose();
        }
    }

    internal static void TryDelete(string path)
    {
        try { File.Delete(path); }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException) { }
    }
}
