using TraceLab.Core;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// A thread's name at an event's time (<see cref="ThreadTable.TryGetNameAt"/>, docs/metrics.md#wake-chain-kind): what
/// the wake chains' thread kinds read, so that they do not depend on how far ahead of the analysis the reader ran.
/// </summary>
public sealed class ThreadNameHistoryTests
{
    private static byte[] Comm(string name) => [.. System.Text.Encoding.ASCII.GetBytes(name), 0, 0, 0];

    [Fact]
    public void The_name_at_a_time_is_the_last_one_an_event_at_or_before_it_showed()
    {
        var names = new ThreadTable();
        names.SetName(7, Comm("java"), 100);
        names.SetName(7, Comm("java"), 150);                 // the same name again: no change
        names.SetName(7, Comm("worker-0"), 200);
        Assert.False(names.TryGetNameAt(7, 99, out _));      // nothing showed it yet
        Assert.True(names.TryGetNameAt(7, 100, out var at100));
        Assert.Equal("java", at100);
        Assert.True(names.TryGetNameAt(7, 199, out var at199));
        Assert.Equal("java", at199);
        Assert.True(names.TryGetNameAt(7, 5000, out var later));
        Assert.Equal("worker-0", later);
        Assert.False(names.TryGetNameAt(8, 5000, out _));
        // The current name is the last one given, as before.
        Assert.Equal("worker-0", names.NameOf(7));
    }

    [Fact]
    public void Names_given_out_of_time_order_are_placed_by_time_and_the_current_name_is_the_last_given()
    {
        // A perf.data reader sees one CPU's records of a round before another's: a rename at 200 on CPU 0, then an
        // event at 150 on CPU 1 that still shows the old name.
        var names = new ThreadTable();
        names.SetName(7, Comm("java"), 100);
        names.SetName(7, Comm("worker-0"), 200);
        names.SetName(7, Comm("java"), 150);
        Assert.True(names.TryGetNameAt(7, 170, out var at170));
        Assert.Equal("java", at170);
        Assert.True(names.TryGetNameAt(7, 250, out var at250));
        Assert.Equal("worker-0", at250);
        Assert.Equal("java", names.NameOf(7));

        // Untimed names (saved cmdlines) set the current name only; a copy keeps the history.
        names.SetName(9, "kworker/0:1");
        Assert.False(names.TryGetNameAt(9, long.MaxValue, out _));
        var copy = names.Copy();
        Assert.True(copy.TryGetNameAt(7, 250, out var copied));
        Assert.Equal("worker-0", copied);
    }
}
