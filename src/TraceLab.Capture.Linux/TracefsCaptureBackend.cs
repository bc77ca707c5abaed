using TraceLab.Core;
using TraceLab.Core.Capture;

namespace TraceLab.Capture.Linux;

/// <summary>
/// The Linux backend behind <see cref="ICaptureBackend"/>: a <see cref="LinuxCaptureSession"/> per run, committed as
/// trace.dat.
/// </summary>
/// <param name="events">Tracepoints to enable instead of the standard set (tests inject events this kernel
/// lacks).</param>
public sealed class TracefsCaptureBackend(IReadOnlyList<string>? events = null) : ICaptureBackend
{
    private readonly IReadOnlyList<string>? _events = events;

    public string Name => "tracefs";
    public string TraceFileName => "trace.dat";

    public string OpenHint(string traceFile) =>
        $"Open the trace: trace-cmd report -i {traceFile}   or   kernelshark {traceFile}";

    public void EnsureAvailable() => Tracefs.Locate();

    public ICaptureSession Start(CaptureRequest request) =>
        new Session(LinuxCaptureSession.Start(new LinuxCaptureOptions
        {
            RunId = request.RunId,
            WorkDirectory = request.WorkDirectory,
            BufferSizeKb = request.BufferSizeKb,
            Events = _events,
            Syscalls = request.Syscalls switch
            {
                CaptureSyscalls.None => SyscallSet.None,
                CaptureSyscalls.Lock => SyscallSet.Lock,
                CaptureSyscalls.Waits => SyscallSet.Waits,
                CaptureSyscalls.All => SyscallSet.All,
                _ => throw new ArgumentOutOfRangeException(nameof(request)),
            },
        }));

    private sealed class Session(LinuxCaptureSession inner)
        : ICaptureSession, ILiveCapture, ICaptureGuard, IHelperProcesses
    {
        public IReadOnlyList<int> HelperPids => [inner.Guard.Pid];
        public void KillWithCapture(int pid) => inner.Guard.KillWithCapture(pid);
        public void Release(int pid) => inner.Guard.Release(pid);

        public string? MarkerPath => inner.TraceMarkerPath;

        public bool WriteMarker(string text)
        {
            try
            {
                using var f = new FileStream(inner.TraceMarkerPath, FileMode.Open, FileAccess.Write,
                    FileShare.ReadWrite);
                f.Write(System.Text.Encoding.ASCII.GetBytes(text + "\n"));
                return true;
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                return false;
            }
        }

        public IReadOnlyList<string> Notices { get; } = inner.StaleInstancesRemoved
            .Select(name => $"removed stale tracefs instance {name} left by a TraceLab run that died")
            .Concat(inner.StaleInstancesKept)
            .Concat(OtherTracing.Notice(inner.OtherTracing) is { } other ? new[] { other } : []).ToList();

        public IReadOnlyList<string> MissingEvents => inner.MissingEvents;
        public CancellationToken Failed => inner.CopyFailed;
        public long BytesCaptured => inner.BytesCopied;
        public void ThrowIfFailed() => inner.ThrowIfCopyFailed();
        public ICapturedTrace Stop() => new Captured(inner.Stop());
        public IDisposable StartLive(IKernelEventSink sink) => inner.StartLive(sink);
        public void Dispose() => inner.Dispose();
    }

    private sealed class Captured(RawCapture raw) : ICapturedTrace
    {
        // Per-CPU loss is in the trace's CPU stats and reported by the analysis; nothing to add here.
        public IReadOnlyList<string> Notes => [];
        public void WriteTo(string path) => raw.WriteTraceDat(path);
        public void Discard() => raw.DeleteRawFiles();
    }
}
