namespace TraceLab.Core.Capture;

/// <summary>
/// A capture that runs processes of its own beside TraceLab (the Linux capture's guard): the trace names them as
/// TraceLab's, so reports leave them out with TraceLab's own process (docs/metrics.md#self-exclusion).
/// </summary>
public interface IHelperProcesses
{
    /// <summary>The pids of the capture's own helper processes.</summary>
    IReadOnlyList<int> HelperPids { get; }
}
