using TraceLab.Analyzers;
using TraceLab.Core;
using Xunit;

namespace TraceLab.Tests.Analyzers;

public class ThreadSlotsTests
{
    [Fact]
    public void Slots_are_dense_in_first_seen_order_and_stable()
    {
        var slots = new ThreadSlots();
        // Small, page-crossing, far (top-level growth), zero and negative ids.
        int[] tids = [42, 7, 4_194_303, 1024, 0, -1, 1023, -3];
        for (var i = 0; i < tids.Length; i++) Assert.Equal(i, slots.SlotOf(tids[i]));
        for (var i = 0; i < tids.Length; i++)
        {
            Assert.Equal(i, slots.SlotOf(tids[i]));
            Assert.Equal(tids[i], slots.TidOf(i));
        }
        Assert.Equal(tids.Length, slots.Count);
    }

    [Fact]
    public void Per_slot_tables_grow_and_read_null_past_their_end()
    {
        string?[] table = [];
        Assert.Null(ThreadSlots.Find(table, 5));
        ThreadSlots.Store(ref table, 5, "five");
        ThreadSlots.Store(ref table, 100, "hundred");
        Assert.Equal("five", ThreadSlots.Find(table, 5));
        Assert.Equal("hundred", ThreadSlots.Find(table, 100));
        Assert.Null(ThreadSlots.Find(table, 6));
        Assert.Null(ThreadSlots.Find(table, -1));
        Assert.Null(ThreadSlots.Find(table, table.Length));
    }

    /// <summary>
    /// Per-thread results are still reported in first-seen order (reports iterate them): threads with far-apart tids
    /// seen in a known order come out of the accounting's Threads in that order, with their own counts.
    /// </summary>
    [Fact]
    public void Accounting_keeps_threads_in_first_seen_order_across_slot_pages()
    {
        var accounting = new ThreadAccounting();
        int[] order = [300_000, 5, 70_000, 1_030];
        long t = 1000;
        var prev = 0;
        foreach (var tid in order)
        {
            accounting.OnEvent(KernelEvent.Switch(t += 100, 0, prev, 120, prev == 0 ? 0 : TaskState.Interruptible, tid, 120));
            prev = tid;
        }
        accounting.OnEvent(KernelEvent.Switch(t += 100, 0, prev, 120, TaskState.Interruptible, 0, 120));
        accounting.Complete();
        Assert.Equal(order, accounting.Threads.Keys);
        foreach (var tid in order)
        {
            Assert.Equal(100, accounting.Threads[tid].RunNs);
            Assert.Equal(1, accounting.Threads[tid].VoluntarySwitches);
        }
        Assert.False(accounting.TryGetRunningSince(order[0], out _));
    }
}
