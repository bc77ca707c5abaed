using TraceLab.Analyzers.Smp;
using TraceLab.Core;

namespace TraceLab.Reporting.Sections;

/// <summary>report.json "smp": CPU residency, migrations, cross-CPU wakeups per thread; busy/idle per CPU.</summary>
public sealed class SmpSection
{
    public List<SmpCpuSection> Cpus { get; init; } = [];
    public List<SmpThreadSection> Threads { get; init; } = [];
    /// <summary>Sums over the reported threads.</summary>
    public required SmpTotalsSection Totals { get; init; }
}

public sealed class SmpCpuSection
{
    public int Cpu { get; init; }
    public long BusyNs { get; init; }
    public long IdleNs { get; init; }
    public long Switches { get; init; }
}

public sealed class SmpThreadSection
{
    public int Tid { get; init; }
    public required string Name { get; init; }
    /// <summary>Running time on each CPU, indexed by CPU number.</summary>
    public List<long> ResidencyNs { get; init; } = [];
    public long Migrations { get; init; }
    public long CpuChanges { get; init; }
    public long WakeupsReceivedSameCpu { get; init; }
    public long WakeupsReceivedCrossCpu { get; init; }
    public long WakeupsGivenSameCpu { get; init; }
    public long WakeupsGivenCrossCpu { get; init; }
    public long RunnableWhileIdleNs { get; init; }
}

public sealed class SmpTotalsSection
{
    public long Migrations { get; init; }
    public long CpuChanges { get; init; }
    public long WakeupsReceived { get; init; }
    public long WakeupsReceivedCrossCpu { get; init; }
    public long WakeupsGivenCrossCpu { get; init; }
}

internal static class SmpSectionBuilder
{
    public static SmpSection Build(SmpAnalyzer smp, IReadOnlyList<int> tids, ThreadTable names)
    {
        var cpuCount = smp.Cpus.Count;
        var totals = SmpTotals.Over(smp.Threads, tids);
        return new SmpSection
        {
            Cpus = smp.Cpus.Where(c => c.Seen).Select(c => new SmpCpuSection
            {
                Cpu = c.Cpu,
                BusyNs = c.BusyNs,
                IdleNs = c.IdleNs,
                Switches = c.Switches
            }).ToList(),
            Threads = tids.Select(tid =>
            {
                var s = smp.Threads.GetValueOrDefault(tid);
                return new SmpThreadSection
                {
                    Tid = tid,
                    Name = names.NameOf(tid),
                    ResidencyNs = Enumerable.Range(0, cpuCount).Select(c => s?.ResidencyOn(c) ?? 0).ToList(),
                    Migrations = s?.Migrations ?? 0,
                    CpuChanges = s?.CpuChanges ?? 0,
                    WakeupsReceivedSameCpu = s?.WakeupsReceivedSameCpu ?? 0,
                    WakeupsReceivedCrossCpu = s?.WakeupsReceivedCrossCpu ?? 0,
                    WakeupsGivenSameCpu = s?.WakeupsGivenSameCpu ?? 0,
                    WakeupsGivenCrossCpu = s?.WakeupsGivenCrossCpu ?? 0,
                    RunnableWhileIdleNs = s?.RunnableWhileIdleNs ?? 0,
                };
            }).ToList(),
            Totals = new SmpTotalsSection
            {
                Migrations = totals.Migrations,
                CpuChanges = totals.CpuChanges,
                WakeupsReceived =
                    totals.WakeupsReceived,
                WakeupsReceivedCrossCpu = totals.WakeupsReceivedCrossCpu,
                WakeupsGivenCrossCpu =
                    totals.WakeupsGivenCrossCpu,
            },
        };
    }
}
