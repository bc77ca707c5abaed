namespace TraceLab.Analyzers.Smp;

/// <summary>SMP counts summed over a set of threads (e.g. a workload's workers) for the report.</summary>
public readonly record struct SmpTotals(
    long Migrations,
    long CpuChanges,
    long WakeupsReceived,
    long WakeupsReceivedCrossCpu,
    long WakeupsGivenCrossCpu)
{
    /// <summary>Tids without statistics contribute nothing; a tid listed twice is counted once.</summary>
    public static SmpTotals Over(IReadOnlyDictionary<int, SmpThreadStats> threads, IEnumerable<int> tids)
    {
        long migrations = 0, changes = 0, received = 0, receivedCross = 0, givenCross = 0;
        foreach (var tid in tids.Distinct())
        {
            if (!threads.TryGetValue(tid, out var s)) continue;
            migrations += s.Migrations;
            changes += s.CpuChanges;
            received += s.WakeupsReceivedSameCpu + s.WakeupsReceivedCrossCpu;
            receivedCross += s.WakeupsReceivedCrossCpu;
            givenCross += s.WakeupsGivenCrossCpu;
        }
        return new SmpTotals(migrations, changes, received, receivedCross, givenCross);
    }
}
