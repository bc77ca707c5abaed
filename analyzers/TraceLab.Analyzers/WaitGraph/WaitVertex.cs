using System.Globalization;

namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// Vertex ids of the wait-for graph: a thread is its tid (&gt; 0); the pseudo-vertices are negative so they can never
/// collide with a tid, and each has exactly one id however many interrupts, timers or lost wakeups it stands for.
/// </summary>
public static class WaitVertex
{
    /// <summary>
    /// The wakeup came from interrupt context (hardirq, softirq, NMI) or from the idle task. Same id as the
    /// <c>-1</c> "irq" waker of <see cref="ThreadStats.Wakers"/>, so the two reports line up.
    /// </summary>
    public const int KernelIrq = -1;

    /// <summary>
    /// A timer expiry ended the wait: the backend says the wait was a timed sleep (ETW wait reason DelayExecution /
    /// WrDelayExecution), or an interrupt ended a sleep, a futex or semaphore wait (which only a thread can release),
    /// or a poll-style wait in hard-interrupt context (docs/metrics.md#wait-for-graph).
    /// </summary>
    public const int Timer = -2;

    /// <summary>
    /// The end of the wait was never attributed: no wakeup was logged, or the wait was still open at the end.
    /// </summary>
    public const int Unknown = -3;

    /// <summary>An interrupt ended an uninterruptible (D) wait in a read, write, fsync or memory syscall.</summary>
    public const int Disk = -4;

    /// <summary>A soft interrupt (network receive) ended a socket read or a poll-style wait.</summary>
    public const int Network = -5;

    public static bool IsThread(int vertex) => vertex > 0;

    public static string Name(int vertex) => vertex switch
    {
        KernelIrq => "kernel/irq",
        Timer => "timer",
        Unknown => "unknown",
        Disk => "disk/device",
        Network => "network",
        _ => vertex.ToString(CultureInfo.InvariantCulture),
    };
}
