namespace TraceLab.TestSupport;

/// <summary>
/// Measures steady-state allocation of a code path. A single measurement can pick up one-off runtime allocations
/// on the test thread (tier-up call counting, on-stack replacement of a hot loop), which made a 0-byte assertion
/// flaky in CI. A path that allocates per call allocates in every round, so the fewest bytes over several rounds is
/// what the path itself costs.
/// </summary>
public static class Allocations
{
    public static long FewestBytesPerRound(Action round, int rounds = 5)
    {
        ArgumentNullException.ThrowIfNull(round);
        round();
        var fewest = long.MaxValue;
        for (var i = 0; i < rounds; i++)
        {
            var before = GC.GetAllocatedBytesForCurrentThread();
            round();
            fewest = Math.Min(fewest, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        return fewest;
    }
}
