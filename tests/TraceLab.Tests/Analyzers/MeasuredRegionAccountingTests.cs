using TraceLab.Analyzers;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Analyzers;

public sealed class MeasuredRegionAccountingTests
{
    private const int A = 100, B = 200;
    private const long S = TaskState.Interruptible, R = TaskState.Running;

    /// <summary>
    /// One CPU, A and B alternate. Region = [4000, 9000] (markers written by A).
    /// Before: A 1000..2000, B 2000..3000, A 3000..6000 (spans BEGIN). Inside: B 6000..8000, A 8000..10000 (spans END).
    /// After: B 10000..12000, A 12000..
    /// </summary>
    private static ThreadAccounting Scenario() => Run(
        KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
        KernelEvent.Switch(2000, 0, A, 120, S, B, 120),
        KernelEvent.Waking(2500, 0, B, A, 0),
        KernelEvent.Switch(3000, 0, B, 120, R, A, 120),
        KernelEvent.Marker(4000, 0, A, MeasuredRegion.BeginMarker + " iterations=3"),
        KernelEvent.Switch(6000, 0, A, 120, S, B, 120),
        KernelEvent.Waking(7000, 0, B, A, 0),
        KernelEvent.Switch(8000, 0, B, 120, R, A, 120),
        KernelEvent.Marker(9000, 0, A, MeasuredRegion.EndMarker),
        KernelEvent.Switch(10000, 0, A, 120, S, B, 120),
        KernelEvent.Waking(11000, 0, B, A, 0),
        KernelEvent.Switch(12000, 0, B, 120, S, A, 120),
        KernelEvent.Marker(13000, 0, A, MeasuredRegion.BeginMarker),   // a second BEGIN is ignored
        KernelEvent.Switch(14000, 0, A, 120, R, B, 120));

    [Fact]
    public void Region_bounds_come_from_the_markers()
    {
        var acc = Scenario();
        Assert.True(acc.Region.HasBegin);
        Assert.True(acc.Region.HasEnd);
        Assert.Equal(4000, acc.Region.Begin);
        Assert.Equal(9000, acc.Region.End);
        Assert.Equal(A, acc.Region.MarkerTid);
    }

    [Fact]
    public void Intervals_spanning_the_markers_are_clipped_exactly()
    {
        var acc = Scenario();
        var a = acc.Threads[A];
        var b = acc.Threads[B];

        Assert.Equal(2000 + 1000, a.RunNs);   // 4000..6000 of 3000..6000, 8000..9000 of 8000..10000
        Assert.Equal(1000, a.ReadyNs);        // woken 7000, runs 8000
        Assert.Equal(1000, a.WaitNs);         // 6000..7000

        Assert.Equal(2000, b.RunNs);          // 6000..8000
        Assert.Equal(2000 + 1000, b.ReadyNs); // 4000..6000 of 3000..6000, 8000..9000 of 8000..10000
        Assert.Equal(0, b.WaitNs);

        // Both threads are fully accounted for over the 5000 ns region, nothing outside it.
        Assert.Equal(5000, a.RunNs + a.ReadyNs + a.WaitNs);
        Assert.Equal(5000, b.RunNs + b.ReadyNs + b.WaitNs);
    }

    [Fact]
    public void Counts_before_begin_and_after_end_are_excluded()
    {
        var acc = Scenario();
        var a = acc.Threads[A];
        var b = acc.Threads[B];

        Assert.Equal(1, a.VoluntarySwitches);    // 6000 only (2000 before, 10000 after)
        Assert.Equal(0, a.InvoluntarySwitches);  // 14000 is after END
        Assert.Equal(0, b.VoluntarySwitches);    // 12000 is after END
        Assert.Equal(1, b.InvoluntarySwitches);  // 8000 (3000 is before BEGIN)

        Assert.Equal(1, a.WakeupsReceived);      // 7000 (2500 before, 11000 after)
        Assert.Equal(new Dictionary<int, long> { [B] = 1 }, a.Wakers);
        Assert.Equal(1, b.WakeupsGiven);
        Assert.Equal(0, a.WakeupsGiven);

        Assert.Equal(1, a.ReadyLatency.Count);   // 7000 -> 8000
        Assert.Equal(1000, a.ReadyLatency.Max);
        Assert.Equal(1, b.ReadyLatency.Count);   // the switch-in at 6000; 10000 is after END
    }

    [Fact]
    public void Without_markers_the_region_is_the_whole_trace()
    {
        var acc = Run(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(3000, 0, A, 120, S, 0, 120),
            KernelEvent.Marker(3500, 0, 0, MeasuredRegion.EndMarker),    // END without BEGIN is ignored
            KernelEvent.Waking(4000, 1, B, A, 0),
            KernelEvent.Switch(6000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(7000, 0, A, 120, R, 0, 120));

        Assert.False(acc.Region.HasBegin);
        Assert.False(acc.Region.HasEnd);
        var a = acc.Threads[A];
        Assert.Equal(3000, a.RunNs);
        Assert.Equal(2000, a.ReadyNs);
        Assert.Equal(1000, a.WaitNs);
        Assert.Equal(1, a.VoluntarySwitches);
        Assert.Equal(1, a.InvoluntarySwitches);
    }
}
