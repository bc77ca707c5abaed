using TraceLab.Analyzers.Timeline;
using Xunit;

namespace TraceLab.TestSupport;

/// <summary>Two timeline recordings the same, item for item and in order.</summary>
public static class TimelineAssert
{
    public static void Same(TimelineData expected, TimelineData actual)
    {
        Assert.Equal((expected.Window, expected.Start, expected.End, expected.Truncated),
            (actual.Window, actual.Start, actual.End, actual.Truncated));
        Assert.Equal(expected.Segments, actual.Segments);
        Assert.Equal(expected.Wakes, actual.Wakes);
        Assert.Equal(expected.Handoffs, actual.Handoffs);
        Assert.Equal(expected.Episodes, actual.Episodes);
        Assert.Equal(expected.FutileWakeups, actual.FutileWakeups);
    }
}
