namespace TraceLab.Formats.Tests;

/// <summary>The process-wide slot of one kept buffer: alone, so no other test's reader takes or fills it meanwhile.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ReadBuffersAlone
{
    public const string Name = "ReadBuffers";
}

/// <summary>
/// <see cref="ReadBuffers.KeepBetweenReads"/>: inside a scope a finished read's buffer is the next read's (its pages
/// written once, docs/performance.md#window-steps); outside, and once the last scope ends, it is freed.
/// </summary>
[Collection(ReadBuffersAlone.Name)]
public sealed unsafe class ReadBuffersTests
{
    private const int Length = 4 << 20;

    [Fact]
    public void A_buffer_is_kept_for_the_next_read_of_the_same_size_only_inside_a_scope()
    {
        var outside = ReadBuffer.Rent(Length);
        outside.Dispose();
        Assert.True(outside.Pointer is null, "freed: no scope keeps it");
        var next = ReadBuffer.Rent(Length);
        Assert.NotSame(outside, next);
        next.Dispose();

        ReadBuffer kept;
        using (ReadBuffers.KeepBetweenReads())
        {
            kept = ReadBuffer.Rent(Length);
            kept.Dispose();
            Assert.True(kept.Pointer is not null, "kept by the scope");
            var again = ReadBuffer.Rent(Length);
            Assert.Same(kept, again);
            again.Dispose();

            // Another size: the kept one is freed, a new one made (and kept in its turn).
            var other = ReadBuffer.Rent(Length / 2);
            Assert.NotSame(kept, other);
            Assert.True(kept.Pointer is null, "a kept buffer of another size is freed");
            kept = other;
            kept.Dispose();
        }

        Assert.True(kept.Pointer is null, "the scope's end frees what it kept");
    }

    [Fact]
    public void The_buffer_is_kept_until_the_last_of_several_scopes_ends()
    {
        var first = ReadBuffers.KeepBetweenReads();
        var second = ReadBuffers.KeepBetweenReads();
        var buffer = ReadBuffer.Rent(Length);
        buffer.Dispose();
        first.Dispose();
        first.Dispose();
        Assert.True(buffer.Pointer is not null,
            "one scope is still open (a second Dispose of the first changes nothing)");
        second.Dispose();
        Assert.True(buffer.Pointer is null);
    }

    [Fact]
    public void Buffers_are_written_in_4_KiB_pages_unless_asked()
    {
        // The CLI asks only with the heap's choice of huge pages (HugePageHeap); a library user gets 4 KiB pages.
        Assert.False(ReadBuffers.HugePages);
    }
}
