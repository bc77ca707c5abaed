using TraceLab.Core.Capture;

namespace TraceLab.Capture.Windows;

/// <summary>
/// The Windows backend behind <see cref="ICaptureBackend"/>: one kernel ETW session per run writing an .etl while the
/// workload runs, committed as trace.etl and parsed only afterwards, by the managed reader every OS uses
/// (<see cref="Formats.Etl.EtlFileReader"/>).
/// </summary>
public sealed class EtwCaptureBackend : ICaptureBackend
{
    private readonly IEtwSessionController? _controller;
    private readonly Func<int, bool> _processAlive;
    private readonly Action<string, string> _merge;
    private readonly int _ownerPid;
    private readonly Func<int, IEtwGuard>? _startGuard;
    private readonly Func<IProcessJob>? _createJob;
    private readonly Func<IEtwMarkerWriter>? _createMarkerWriter;

    /// <summary>
    /// The real backend (Windows): sessions guarded by a second TraceLab process, built-in workloads in a
    /// kill-on-close job. Elsewhere <see cref="EnsureAvailable"/> says ETW is Windows-only.
    /// </summary>
    public EtwCaptureBackend()
        : this(OperatingSystem.IsWindows() ? new TraceEventSessionController() : null, EtwStaleSessions.ProcessAlive,
            Merge, Environment.ProcessId, StartGuard, CreateJob,
            OperatingSystem.IsWindows() ? () => new EtwEventWriter(EtwCaptureSession.WorkloadProvider) : null)
    {
    }

    /// <summary>For tests: a fake controller, liveness, merge, and optionally a fake guard and job.</summary>
    /// <param name="startGuard">Starts the guard for an owner pid; null: the sessions are not guarded.</param>
    /// <param name="createJob">Makes the job built-in workloads die with; null: they are not put in one.</param>
    /// <param name="createMarkerWriter">Makes the writer of TraceLab's own markers; null: none are written.</param>
    public EtwCaptureBackend(IEtwSessionController? controller, Func<int, bool> processAlive,
        Action<string, string> merge, int ownerPid, Func<int, IEtwGuard>? startGuard = null,
        Func<IProcessJob>? createJob = null, Func<IEtwMarkerWriter>? createMarkerWriter = null)
    {
        _createMarkerWriter = createMarkerWriter;
        _controller = controller;
        _processAlive = processAlive;
        _merge = merge;
        _ownerPid = ownerPid;
        _startGuard = startGuard;
        _createJob = createJob;
    }

    public string Name => "etw";
    public string TraceFileName => "trace.etl";

    public string OpenHint(string traceFile) =>
        $"Open the trace in WPA: wpa \"{traceFile}\" → Computation → CPU Usage (Precise), columns NewThreadId, "
            + $"ReadyingThreadId, Ready (µs), Waits (µs)";

    public void EnsureAvailable() => Controller();

    public ICaptureSession Start(CaptureRequest request)
    {
        var controller = Controller();
        return EtwCaptureSession.Start(controller, request, _processAlive, _merge, _ownerPid,
            new EtwSessionProtection(_startGuard, _createJob) { CreateMarkerWriter = _createMarkerWriter });
    }

    private static IEtwGuard StartGuard(int ownerPid) => EtwSessionGuard.Start(SelfCommand.Current(), ownerPid);

    private static IProcessJob CreateJob()
    {
        if (!OperatingSystem.IsWindows()) throw new PlatformNotSupportedException("job objects are Windows-only");
        return new KillOnCloseJob();
    }

    private IEtwSessionController Controller()
    {
        if (_controller is null)
            throw new CaptureUnavailableException(
                "the ETW backend runs on Windows only (on Linux TraceLab captures with tracefs)");
        if (!_controller.IsElevated())
            throw new CaptureUnavailableException(
                "ETW kernel capture needs Administrator: run from an elevated prompt (Run as administrator)");
        return _controller;
    }

    private static void Merge(string input, string output)
    {
        if (!OperatingSystem.IsWindows()) throw new PlatformNotSupportedException("merging .etl files needs Windows");
        TraceEventSessionController.Merge(input, output);
    }
}
