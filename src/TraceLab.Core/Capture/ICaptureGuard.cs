namespace TraceLab.Core.Capture;

/// <summary>
/// A capture whose kernel state is cleaned up by a separate guard process when TraceLab dies (even by SIGKILL), and
/// which can take processes down with it: the built-in workloads, never a user's program.
/// </summary>
public interface ICaptureGuard
{
    /// <summary>The guard kills <paramref name="pid"/> if TraceLab dies before <see cref="Release"/>.</summary>
    void KillWithCapture(int pid);

    /// <summary>
    /// The process exited normally (or was killed by us): forget it, so a reused pid is never killed.
    /// </summary>
    void Release(int pid);
}
