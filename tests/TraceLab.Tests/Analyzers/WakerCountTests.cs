using TraceLab.Analyzers;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// <see cref="ThreadStats.Wakers"/> is accumulated through a small per-thread cache; its counts and its key order
/// (first wakeup first, which the wakeup section's columns follow) must equal a plain count of the logged wakeups.
/// </summary>
public sealed class WakerCountTests
{
    private const int V = 50;

    [Fact]
    public void Counts_and_first_seen_order_match_a_plain_count_through_cache_collisions_and_the_region_reset()
    {
        // Wakers 100, 108, 116, 124 share a cache entry (same low three bits); 0 is idle (counted as -1).
        int[] before = [100, 108, 100, 101];
        int[] inRegion = [108, 108, 100, 0, 116, 100, 124, 108, 101, 116, 116, 0, 100, 124, 124, 124];
        var events = new List<KernelEvent>();
        long t = 1000;
        foreach (var w in before) events.Add(KernelEvent.Waking(t += 100, 0, w, V, 1));
        events.Add(KernelEvent.Marker(t += 100, 1, 7, MeasuredRegion.BeginMarker));
        foreach (var w in inRegion) events.Add(KernelEvent.Waking(t += 100, 0, w, V, 1));

        var acc = Run([.. events]);

        var expected = new List<KeyValuePair<int, long>>();
        foreach (var w in inRegion)
        {
            var key = w == 0 ? -1 : w;
            var i = expected.FindIndex(p => p.Key == key);
            if (i < 0) expected.Add(new(key, 1));
            else expected[i] = new(key, expected[i].Value + 1);
        }
        Assert.Equal(expected, acc.Threads[V].Wakers.ToList());
        Assert.Equal(inRegion.Length, acc.Threads[V].WakeupsReceived);
        Assert.Equal(4, acc.Threads[124].WakeupsGiven);
        // Read twice: reading adds the cached counts once, not again.
        Assert.Equal(expected, acc.Threads[V].Wakers.ToList());
    }
}
