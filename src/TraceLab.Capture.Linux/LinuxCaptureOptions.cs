namespace TraceLab.Capture.Linux;

public sealed class LinuxCaptureOptions
{
    /// <summary>
    /// Per-CPU ring buffer size. 64 MB per CPU kept a 12 s, 400 k switches/s run loss-free on these machines.
    /// </summary>
    public int BufferSizeKb { get; init; } = 64 * 1024;

    public SyscallSet Syscalls { get; init; } = SyscallSet.Lock;

    /// <summary>
    /// "mono" makes trace timestamps CLOCK_MONOTONIC, the clock the workloads report their region in.
    /// </summary>
    public string Clock { get; init; } = "mono";

    /// <summary>Identifies the run in the instance name (with the owner pid).</summary>
    public required string RunId { get; init; }

    /// <summary>Directory for the per-CPU raw page files (the run's output directory).</summary>
    public required string WorkDirectory { get; init; }

    /// <summary>
    /// Tracepoints ("system/name") to enable instead of <see cref="CaptureEventSet.For"/>(<see cref="Syscalls"/>);
    /// tests inject events a kernel lacks.
    /// </summary>
    public IReadOnlyList<string>? Events { get; init; }
}
