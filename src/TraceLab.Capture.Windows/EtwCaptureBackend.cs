using TraceLab.Core.Capture;

namespace TraceLab.Capture.Windows;

/// <summary>
/// The Windows backend behind <see cref="ICaptureBackend"/>: one kernel ETW session per run writing an .etl while the
/// workload runs, parsed only afterwards (by <see cref="EtlTraceReader"/>), committed as trace.etl.
/// </summary>
public sealed class EtwCaptureBackend : ICaptureBackend
{
    private readonly IEtwSessionController? _controller;
    private readonly Func<int, bool> _processAlive;
    private readonly Action<string, string> _merge;
    private readonly int _ownerPid;

    /// <summary>The real backend (Windows); elsewhere <see cref="EnsureAvailable"/> says ETW is Windows-only.</summary>
    public EtwCaptureBackend()
        : this(OperatingSystem.IsWindows() ? new TraceEventSessionController() : null, EtwStaleSessions.ProcessAlive,
            Merge, Environment.ProcessId)
    {
    }

    /// <summary>For tests: a fake controller, liveness and merge.</summary>
    public EtwCaptureBackend(IEtwSessionController? controller, Func<int, bool> processAlive, Action<string, string> merge, int ownerPid)
    {
        _controller = controller;
        _processAlive = processAlive;
        _merge = merge;
        _ownerPid = ownerPid;
    }

    public string Name => "etw";
    public string TraceFileName => "trace.etl";

    public string OpenHint(string traceFile) =>
        $"Open the trace in WPA: wpa \"{traceFile}\" → Computation → CPU Usage (Precise), columns NewThreadId, ReadyingThreadId, Ready (µs), Waits (µs)";

    public void EnsureAvailable() => Controller();

    public ICaptureSession Start(CaptureRequest request)
    {
        var controller = Controller();
        return EtwCaptureSession.Start(controller, request, _processAlive, _merge, _ownerPid);
    }

    private IEtwSessionController Controller()
    {
        if (_controller is null)
            throw new CaptureUnavailableException("the ETW backend runs on Windows only (on Linux TraceLab captures with tracefs)");
        if (!_controller.IsElevated())
            throw new CaptureUnavailableException("ETW kernel capture needs Administrator: run from an elevated prompt (Run as administrator)");
        return _controller;
    }

    private static void Merge(string input, string output)
    {
        if (!OperatingSystem.IsWindows()) throw new PlatformNotSupportedException("merging .etl files needs Windows");
        TraceEventSessionController.Merge(input, output);
    }
}
