namespace TraceLab.Core.Capture;

/// <summary>A backend that can also deliver kernel events while the workload runs (the `--live` view).</summary>
public interface ILiveCaptureBackend
{
    /// <summary>
    /// Starts a real-time event stream beside the recording capture. <paramref name="sink"/> is called on one
    /// background thread, in timestamp order per CPU; disposing the result stops the stream.
    /// </summary>
    IDisposable StartLive(string runId, IKernelEventSink sink);
}
