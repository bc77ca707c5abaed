using TraceLab.Core;
using TraceLab.Core.Capture;
using TraceLab.Formats.Etw;

namespace TraceLab.Capture.Windows;

/// <summary>
/// One ETW capture: stale TraceLab sessions stopped first, then a kernel session named after this run writing
/// <c>.capture.etl</c> in the run's directory. The kernel copies full buffers to the file while the workload runs;
/// nothing is parsed until the run is over. Disposing always stops the session, whatever happened before.
/// </summary>
public sealed class EtwCaptureSession : ICaptureSession, ILiveCapture
{
    /// <summary>The workload's marker provider ("TraceLab-Workload"), captured into the same file.</summary>
    public static readonly Guid WorkloadProvider = WorkloadMarkers.ProviderGuid;

    private readonly IEtwRecordingSession _recording;
    private readonly Action<string, string> _merge;
    private readonly CancellationTokenSource _failed = new();
    private bool _stopped;
    private bool _handedOver;

    private EtwCaptureSession(IEtwRecordingSession recording, string etlPath, IReadOnlyList<string> notices, Action<string, string> merge)
    {
        _recording = recording;
        EtlPath = etlPath;
        Notices = notices;
        _merge = merge;
    }

    public string SessionName => _recording.Name;
    /// <summary>The file the session writes while it runs (renamed or merged into trace.etl at commit).</summary>
    public string EtlPath { get; }
    public string? MarkerPath => null;
    public IReadOnlyList<string> Notices { get; }
    /// <summary>Kernel keywords cannot be missing the way tracepoints can: an unsupported flag fails the start.</summary>
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
        Func<int, bool> processAlive, Action<string, string> merge, int ownerPid)
    {
        var stale = EtwStaleSessions.Stop(controller, processAlive);
        Directory.CreateDirectory(request.WorkDirectory);
        var etl = Path.Combine(request.WorkDirectory, ".capture.etl");
        var settings = new EtwSessionSettings(
            EtwSessionName.For(ownerPid, request.RunId), etl, EtwKernelKeywords.For(request), EtwKernelKeywords.StacksFor(request),
            EtwKernelKeywords.BufferSizeMb(request.BufferSizeKb, Environment.ProcessorCount), [WorkloadProvider]);
        IEtwRecordingSession recording;
        try
        {
            recording = controller.Start(settings);
        }
        catch (Exception ex) when (ex is UnauthorizedAccessException or System.Runtime.InteropServices.COMException or NotSupportedException)
        {
            TryDelete(etl);
            throw new CaptureUnavailableException($"cannot start ETW kernel session {settings.Name}: {ex.Message}", ex);
        }
        return new EtwCaptureSession(recording, etl, [.. stale.Notices, .. recording.Notes], merge);
    }

    /// <summary>
    /// A second, real-time kernel session named after this one (+"-live", so the stale sweep finds it too); KrabsETW's
    /// managed wrapper would do the same but is not in the package registry.
    /// </summary>
    public IDisposable StartLive(IKernelEventSink sink)
    {
        if (!OperatingSystem.IsWindows()) throw new CaptureUnavailableException("the ETW real-time view runs on Windows only");
        return EtwLiveSession.Start(SessionName + "-live", sink);
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
