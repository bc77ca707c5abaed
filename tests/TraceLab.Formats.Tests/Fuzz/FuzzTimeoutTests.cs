namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>
/// <see cref="FuzzTimeout"/>: a read starved past its limit once passes on its second read; a read that never ends
/// is still a hang.
/// </summary>
public sealed class FuzzTimeoutTests
{
    private static readonly TimeSpan Limit = TimeSpan.FromMilliseconds(100);

    [Fact]
    public void A_read_that_misses_the_limit_once_gives_its_second_reads_result()
    {
        var calls = 0;
        var ok = FuzzTimeout.TryRead(() =>
        {
            // The first read is held up (as a starved one is), the second is not.
            if (Interlocked.Increment(ref calls) == 1) Thread.Sleep(500);
            return calls;
        }, Limit, out var result, TimeSpan.FromSeconds(10));

        Assert.True(ok);
        Assert.Equal(2, result);
    }

    [Fact]
    public void A_read_that_never_ends_is_a_hang()
    {
        using var never = new ManualResetEventSlim();
        try
        {
            var ok = FuzzTimeout.TryRead(() =>
            {
                never.Wait();
                return 0;
            }, Limit, out _, TimeSpan.FromMilliseconds(300));
            Assert.False(ok);
        }
        finally
        {
            never.Set();   // the reads' threads end with the test
        }
    }

    [Fact]
    public void A_read_within_the_limit_is_read_once()
    {
        var calls = 0;
        Assert.True(FuzzTimeout.TryRead(() => Interlocked.Increment(ref calls), Limit, out var result));
        Assert.Equal(1, result);
        Assert.Equal(1, calls);
    }
}
