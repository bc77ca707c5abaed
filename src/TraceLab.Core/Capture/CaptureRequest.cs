namespace TraceLab.Core.Capture;

/// <summary>Which syscall events a capture records besides the scheduler's (same meaning on every backend).</summary>
public enum CaptureSyscalls
{
    None,
    /// <summary>
    /// Lock syscalls only where the backend can filter (tracefs); ETW's SystemCall keyword records all.
    /// </summary>
    Lock,
    /// <summary>Lock plus the blocking syscalls the wait classification reads, where the backend can filter.</summary>
    Waits,
    All,
}

/// <summary>What one run asks of a capture backend.</summary>
public sealed class CaptureRequest
{
    /// <summary>
    /// Identifies the run in the kernel object's name (with the owner pid), so stale ones can be found.
    /// </summary>
    public required string RunId { get; init; }

    /// <summary>The run's output directory: temporary capture files go here.</summary>
    public required string WorkDirectory { get; init; }

    /// <summary>Buffer size per CPU in KiB.</summary>
    public int BufferSizeKb { get; init; } = 64 * 1024;

    public CaptureSyscalls Syscalls { get; init; } = CaptureSyscalls.Lock;

    /// <summary>Sampled CPU stacks (ETW Profile keyword); ignored by tracefs.</summary>
    public bool SampledStacks { get; init; }

    /// <summary>
    /// `--stacks`: the call stacks of context switches and readying (ETW: CSwitch and ReadyThread stack walks, WPA's
    /// New Thread and Ready Thread stacks). tracefs ignores it: perf records them beside it (PerfStackRecorder).
    /// </summary>
    public bool SwitchStacks { get; init; }
}

/// <summary>
/// Capture cannot be used here (privilege, platform, kernel support); the message is one actionable line.
/// </summary>
public class CaptureUnavailableException : Exception
{
    public CaptureUnavailableException(string message) : base(message) { }
    public CaptureUnavailableException(string message, Exception inner) : base(message, inner) { }
    public CaptureUnavailableException() { }
}
