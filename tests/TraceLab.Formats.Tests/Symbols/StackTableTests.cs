using TraceLab.Core;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>
/// The interning table: one id per (process, frames, kernel part), no allocation for a stack seen before.
/// </summary>
public sealed class StackTableTests
{
    [Fact]
    public void Equal_stacks_share_an_id_and_differ_by_process_and_kernel_part()
    {
        var t = new StackTable();
        ulong[] a = [1, 2, 3];
        var id = t.Intern(10, 5, a, 1);
        Assert.Equal(1, id);
        Assert.Equal(id, t.Intern(10, 9, a, 1));
        Assert.NotEqual(id, t.Intern(11, 9, a, 1));
        Assert.NotEqual(id, t.Intern(10, 9, a, 0));
        Assert.Equal(0, t.Intern(10, 9, [], 0));
        Assert.Equal(a, t.Frames(id).ToArray());
        Assert.Equal(5, t.FirstSeen(id));
        Assert.Equal(3, t.Count);
        Assert.Equal(4, t.Interned);
    }

    [Fact]
    public void Many_stacks_keep_their_frames_through_growth()
    {
        var t = new StackTable();
        for (var i = 0; i < 5000; i++) Assert.Equal(i + 1, t.Intern(1, i, [(ulong)i, (ulong)i * 7, 3], 0));
        for (var i = 0; i < 5000; i++) Assert.Equal(i + 1, t.Intern(1, 0, [(ulong)i, (ulong)i * 7, 3], 0));
        Assert.Equal(new ulong[] { 4999, 4999 * 7, 3 }, t.Frames(5000).ToArray());
    }

    [Fact]
    public void Interning_a_known_stack_allocates_nothing()
    {
        var t = new StackTable();
        ulong[] a = [1, 2, 3, 4, 5, 6, 7, 8];
        t.Intern(1, 0, a, 2);
        // The fewest of several rounds: on a loaded machine the runtime's own work on this thread (a method tiered up
        // mid-loop) was once counted in one round (8,056 bytes), which no round of interning repeats.
        var bytes = Allocations.FewestBytesPerRound(() =>
        {
            for (var i = 0; i < 100_000; i++) t.Intern(1, i, a, 2);
        }, rounds: 3);
        Assert.Equal(0, bytes);
    }
}
