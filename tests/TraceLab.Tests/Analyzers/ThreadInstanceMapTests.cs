using TraceLab.Core;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// <see cref="ThreadInstanceMap.Needs"/> settles most events with a bit per tid modulo 65,536: a tid that shares its
/// bit with an exited one (an alias) must still pass untouched, and a reused tid above that range must still become a
/// new thread.
/// </summary>
public class ThreadInstanceMapTests
{
    private const int High = 70_000;
    private const int Alias = High - 65_536;

    private static KernelEvent Through(ThreadInstanceMap map, KernelEvent e)
    {
        if (map.Needs(e)) map.Rewrite(ref e);
        return e;
    }

    /// <summary>High exits and leaves its CPU dead: a later thread named High is a new one.</summary>
    private static ThreadInstanceMap AfterHighExited()
    {
        var map = new ThreadInstanceMap();
        Through(map, KernelEvent.Exit(1, 0, High));
        Through(map, KernelEvent.Switch(2, 0, High, 120, TaskState.ExitDead, 0, 120));
        return map;
    }

    [Fact]
    public void A_reused_tid_above_the_filter_range_becomes_a_new_thread()
    {
        var map = AfterHighExited();
        var e = Through(map, KernelEvent.SyscallEnter(3, 1, High, 202));
        Assert.Equal(ThreadIds.Of(High, 2), e.CurrentTid);
        Assert.Equal([High], map.ReusedTids);
    }

    [Fact]
    public void A_tid_sharing_an_exited_tids_filter_bit_is_left_alone()
    {
        var map = AfterHighExited();
        var call = KernelEvent.SyscallEnter(3, 1, Alias, 202);
        var wake = KernelEvent.Waking(4, 1, Alias, Alias + 1, 0);
        var run = KernelEvent.Switch(5, 1, Alias + 1, 120, 0, Alias, 120);
        Assert.False(map.Needs(call));
        Assert.False(map.Needs(wake));
        Assert.False(map.Needs(run));
        Assert.Equal(Alias, Through(map, run).NextTid);
        Assert.Empty(map.ReusedTids);
    }
}
