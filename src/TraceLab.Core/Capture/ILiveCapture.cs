namespace TraceLab.Core.Capture;

/// <summary>
/// A running capture that can also deliver its kernel events while the workload runs (the `--live` view).
/// </summary>
public interface ILiveCapture
{
    /// <summary>
    /// Starts delivering events to <paramref name="sink"/> on one background thread (approximately in timestamp
    /// order: a preview, not the record); disposing the result stops it.
    /// </summary>
    IDisposable StartLive(IKernelEventSink sink);
}
