using TraceLab.Core;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Analyzers;

public sealed class DescendantsTests
{
    [Fact]
    public void Descendants_follow_the_fork_tree_and_include_the_root()
    {
        // 1 ─┬─ 10 ─┬─ 11 ── 13
        //    │      └─ 12
        //    └─ 20 (another subtree)
        // 99 ── 98 (unrelated)
        var acc = Run(
            KernelEvent.Fork(1000, 0, 1, 10),
            KernelEvent.Fork(1100, 0, 1, 20),
            KernelEvent.Fork(1200, 0, 10, 11),
            KernelEvent.Fork(1300, 0, 10, 12),
            KernelEvent.Fork(1400, 0, 11, 13),
            KernelEvent.Fork(1500, 0, 99, 98));

        Assert.Equal([10, 11, 12, 13], acc.Lineage.Descendants(10, acc.Threads.Keys));
        Assert.Equal([11, 13], acc.Lineage.Descendants(11, acc.Threads.Keys));
        Assert.Equal([12], acc.Lineage.Descendants(12, acc.Threads.Keys));
        Assert.Equal([1, 10, 11, 12, 13, 20], acc.Lineage.Descendants(1, acc.Threads.Keys));
        Assert.Equal([98, 99], acc.Lineage.Descendants(99, acc.Threads.Keys));
        Assert.Equal(10, acc.Lineage.Parents[11]);
        Assert.Equal(1, acc.Lineage.Parents[10]);
    }

    [Fact]
    public void Descendants_include_threads_seen_only_through_scheduling()
    {
        // The workload's main thread 500 forks 501; 501 runs; 600 is unrelated and also runs.
        var acc = Run(
            KernelEvent.Switch(1000, 0, 0, 120, TaskState.Running, 500, 120),
            KernelEvent.Fork(1500, 0, 500, 501),
            KernelEvent.WakeupNew(1600, 0, 500, 501, 1),
            KernelEvent.Switch(2000, 1, 0, 120, TaskState.Running, 501, 120),
            KernelEvent.Switch(3000, 0, 500, 120, TaskState.Interruptible, 600, 120),
            KernelEvent.Switch(4000, 1, 501, 120, TaskState.Interruptible, 0, 120));

        Assert.Equal([500, 501], acc.Lineage.Descendants(500, acc.Threads.Keys));
        Assert.Equal([501], acc.Lineage.Descendants(501, acc.Threads.Keys));
        Assert.Equal([600], acc.Lineage.Descendants(600, acc.Threads.Keys));
    }
}
