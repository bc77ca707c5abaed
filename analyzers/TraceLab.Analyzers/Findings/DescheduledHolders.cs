using System.Runtime.InteropServices;

namespace TraceLab.Analyzers.Findings;

/// <summary>
/// <see cref="FindingEvidenceAnalyzer"/>'s yield-or-sleep-while-holding evidence (docs/metrics.md, "Findings"): a
/// holder descheduled with a lock held, and the waits behind it meanwhile.
/// </summary>
/// <param name="holding">Where descheduled holders' time goes, per bucket.</param>
/// <param name="wakeWhileHolding">Where holders preempted by the thread they woke go instead.</param>
internal sealed class DescheduledHolders(MeasuredRegion region, WindowSeries holding, WindowSeries wakeWhileHolding)
{
    /// <summary>
    /// <paramref name="g"/>'s first lock operation since it yielded or slept releases an object on which a thread
    /// that is still waiting began to wait during that deschedule: <paramref name="g"/> held the object all along
    /// (docs/metrics.md, "Findings", yield or sleep while holding). Every thread then blocked on the object waited
    /// behind the descheduled holder while the holder was off the CPU: from the later of its wait's start and the
    /// deschedule's until the deschedule's end. What the holder then ran before releasing is the critical section's
    /// own time, which it would have taken without the deschedule.
    /// </summary>
    public void Count(FindingThread g, FindingObject o)
    {
        var d = g.Deschedule;
        // Preempted by a thread it woke by releasing this very object: a handoff's cost, not a lock held meanwhile.
        if (d.ByWakee && d.WakeInOp && d.WakeObject == g.Lock.Object) return;
        var queuedDuring = false;
        foreach (var w in o.Waiters)
            if (!w.Lock.WasWoken && w != g && w.SyscallEnter >= d.Start && w.SyscallEnter <= d.End)
                queuedDuring = true;
        if (!queuedDuring) return;
        var s = o.Stats;
        var held = region.Overlap(d.Start, d.End);
        var series = d.ByWakee ? wakeWhileHolding : holding;
        if (held > 0)
        {
            (d.ByWakee ? s.HolderWakePreemptedNs : s.HolderDescheduledNs).AddTo(g.Tid, held);
            series.AddClipped(d.Start, d.End, region);
        }
        if (region.Contains(d.End))
        {
            if (d.ByWakee) s.WakePreemptionsWhileHolding++;
            else s.DeschedulesWhileHolding++;
        }
        var behind = d.ByWakee ? s.WaitBehindWakePreemptedNs : s.WaitBehindDescheduledNs;
        foreach (var w in o.Waiters)
        {
            if (w.Lock.WasWoken || w == g) continue;
            var since = Math.Max(Math.Max(w.SyscallEnter, d.Start), w.BehindCountedUntil);
            if (since >= d.End) continue;
            w.BehindCountedUntil = d.End;
            var ns = region.Overlap(since, d.End);
            if (ns <= 0) continue;
            behind.AddTo(w.Tid, ns);
            series.AddClipped(since, d.End, region);
        }
    }
}

/// <summary>The small accumulations the findings evidence repeats.</summary>
internal static class EvidenceSums
{
    /// <summary>Adds <paramref name="ns"/> to <paramref name="tid"/>'s entry: one hashed lookup.</summary>
    public static void AddTo(this Dictionary<int, long> perThread, int tid, long ns) =>
        CollectionsMarshal.GetValueRefOrAddDefault(perThread, tid, out _) += ns;

    /// <summary>Adds [<paramref name="a"/>, <paramref name="b"/>) clipped to <paramref name="region"/>.</summary>
    public static void AddClipped(this WindowSeries series, long a, long b, MeasuredRegion region) =>
        series.AddInterval(Math.Max(a, region.Begin), Math.Min(b, region.End));
}
