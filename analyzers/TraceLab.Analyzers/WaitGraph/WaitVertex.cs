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
    /// A timer expiry ended the wait. Only used when the backend says the wait was a timed sleep (ETW wait reason
    /// DelayExecution / WrDelayExecution); Linux logs timer wakeups in interrupt context without saying so, and they
    /// land on <see cref="KernelIrq"/>.
    /// </summary>
    public const int Timer = -2;

    /// <summary>
    /// The end of the wait was never attributed: no wakeup was logged, or the wait was still open at the end.
    /// </summary>
    public const int Unknown = -3;

    public static bool IsThread(int vertex) => vertex > 0;

    public static string Name(int vertex) => vertex switch
    {
        KernelIrq => "kernel/irq",
        Timer => "timer",
        Unknown => "unknown",
        _ => vertex.ToString(CultureInfo.InvariantCulture),
    };
}
