using TraceLab.Core;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// Events the accounting only takes as evidence that their thread runs (syscalls, exec, unmodelled kinds) go through
/// a shortcut when they come from the CPU's current thread; every such kind must still move the last sighting and,
/// from another thread or on a CPU not seen before, still repair the chain.
/// </summary>
public sealed class EvidenceOnlyEventTests
{
    private const int A = 100, B = 200, C = 300;
    private const long S = TaskState.Interruptible, R = TaskState.Running;

    private static KernelEvent By(KernelEventKind kind, long ts, int cpu, int pid) => new()
    {
        Timestamp = ts,
        Cpu = cpu,
        CurrentTid = pid,
        Kind = kind,
    };

    [Theory]
    [InlineData(KernelEventKind.Other)]
    [InlineData(KernelEventKind.SyscallEnter)]
    [InlineData(KernelEventKind.SyscallExit)]
    [InlineData(KernelEventKind.Exec)]
    public void Last_sighting_by_each_kind_ends_the_run_when_the_next_switch_was_lost(KernelEventKind kind)
    {
        // cpu0: A from 1000, last seen at 3000 by an event of this kind; B shows up at 5000 with no switch naming it,
        // so A ran 1000..3000 and B from 3000 until it sleeps at 8000. cpu3 is first seen through C's event at 500:
        // C runs from 500, no chain break (nothing was known to run there), until the end of the trace (8000).
        var acc = Run(
            By(kind, 500, 3, C),
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            By(kind, 2000, 0, A),
            By(kind, 3000, 0, A),
            By(kind, 5000, 0, B),
            By(kind, 6000, 0, B),
            KernelEvent.Switch(8000, 0, B, 120, S, 0, 120));

        Assert.Equal(2000, acc.Threads[A].RunNs);
        Assert.Equal(5000, acc.Threads[B].RunNs);
        Assert.Equal(7500, acc.Threads[C].RunNs);
        Assert.Equal(1, acc.ChainBreaks);
        Assert.Equal(500, acc.FirstTimestamp);
        Assert.Equal(8000, acc.LastTimestamp);
    }
}
