using TraceLab.Analyzers;
using TraceLab.Core;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// <see cref="ProcessLineage.ProcessOf(int, int)"/> remembers each slot's answer; an exec, a fork or a marker can
/// change the answer, and the remembered one must follow.
/// </summary>
public sealed class ProcessLineageCacheTests
{
    [Fact]
    public void The_remembered_process_follows_execs_forks_and_markers()
    {
        var acc = new ThreadAccounting();
        acc.OnEvent(KernelEvent.Fork(1000, 0, 1, 10));
        var slot10 = acc.Slots.SlotOf(10);
        Assert.Equal(1, acc.Lineage.ProcessOf(10, slot10));   // created by 1, nothing identifies 10's process yet
        Assert.Equal(1, acc.Lineage.ProcessOf(10, slot10));   // the remembered answer

        acc.OnEvent(KernelEvent.Exec(2000, 0, 10, 10, 10, "/bin/server"));
        Assert.Equal(10, acc.Lineage.ProcessOf(10));
        Assert.Equal(10, acc.Lineage.ProcessOf(10, slot10));  // an exec makes 10 a process of its own

        acc.OnEvent(KernelEvent.Fork(3000, 0, 10, 11, ForkChild.Thread));
        var slot11 = acc.Slots.SlotOf(11);
        Assert.Equal(10, acc.Lineage.ProcessOf(11, slot11));

        acc.OnEvent(KernelEvent.Marker(4000, 0, 77, MeasuredRegion.TargetPidsMarker + "11"));
        Assert.Equal(acc.Lineage.ProcessOf(11), acc.Lineage.ProcessOf(11, slot11));
        Assert.Equal(11, acc.Lineage.ProcessOf(11, slot11)); // a target pid is a process

        // A slot the caller does not hold (-1) is answered without remembering.
        Assert.Equal(10, acc.Lineage.ProcessOf(10, -1));
    }
}
