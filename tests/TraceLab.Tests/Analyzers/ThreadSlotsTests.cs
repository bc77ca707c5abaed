using TraceLab.Analyzers;
using TraceLab.Core;

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
    public void Per_slot_tables_grow_create_once_and_read_null_where_nothing_was_created()
    {
        var created = 0;
        var table = new SlotTable<string>((tid, slot) => { created++; return $"{tid}@{slot}"; });
        Assert.Null(table.Find(5));
        Assert.Equal("500@5", table.At(5, 500));
        Assert.Equal("1000@100", table.At(100, 1000));
        Assert.Equal("500@5", table.At(5, 500));
        Assert.Equal(2, created);
        Assert.Equal("500@5", table.Find(5));
        Assert.Null(table.Find(6));
        Assert.Null(table.Find(-1));
        Assert.Null(table.Find(100_000));
        Assert.Equal([(500, "500@5"), (1000, "1000@100")], table.InOrder);
        Assert.Equal([500, 1000], table.ByTid.Keys);
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
            accounting.OnEvent(
                KernelEvent.Switch(t += 100, 0, prev, 120, prev == 0 ? 0 : TaskState.Interruptible, tid, 120));
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
