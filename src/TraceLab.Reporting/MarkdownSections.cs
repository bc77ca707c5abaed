using System.Globalization;
using System.Text;
using TraceLab.Reporting.Sections;

namespace TraceLab.Reporting;

/// <summary>report.md sections for the kernel, convoy, wakeup and wait-graph analyses.</summary>
internal static class MarkdownSections
{
    public static void Kernel(StringBuilder sb, KernelSection k)
    {
        sb.AppendLine("## Kernel time").AppendLine();
        if (!k.Captured)
        {
            sb.AppendLine(k.Note).AppendLine();
            return;
        }
        sb.AppendLine($"In syscalls: on CPU between sys_enter and sys_exit ({Units.Ms(k.KernelCpuNs)} ms). Kernel estimate: plus {k.BoundaryNsPerCall} ns per call for the entry/exit paths, " +
            $"{k.BoundaryNsPerOffCpuCall} ns per call that was switched out (1st percentiles of {Units.N(k.BoundarySamples)} and {Units.N(k.BoundaryOffCpuSamples)} exit→enter gaps): {Units.Ms(k.EstimatedKernelNs)} ms" +
            (k.RusageSystemNs is { } r && r > 0 ? $"; the workload's getrusage system time: {Units.Ms(r)} ms (estimate/rusage = {((double)k.EstimatedKernelNs / r).ToString("0.00", CultureInfo.InvariantCulture)})." : "."));
        if (k.UnmatchedExits > 0) sb.AppendLine($"{Units.N(k.UnmatchedExits)} syscall exits had no entry in the trace (in progress when tracing started).");
        sb.AppendLine();
        sb.AppendLine("| tid | name | run ms | in syscalls ms | kernel est. ms | outside syscalls ms | sys ms (rusage) | calls | blocked in syscalls ms | ready in syscalls ms | syscalls (calls, cpu/blocked/ready ms) |");
        sb.AppendLine("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
        foreach (var t in k.Threads)
        {
            var calls = string.Join("; ", t.Syscalls.Select(s => $"{s.Name} ×{Units.N(s.Calls)} {Units.Ms(s.CpuNs)}/{Units.Ms(s.BlockedNs)}/{Units.Ms(s.ReadyNs)}"));
            sb.AppendLine($"| {t.Tid} | {t.Name} | {Units.Ms(t.RunNs)} | {Units.Ms(t.KernelCpuNs)} | {Units.Ms(t.EstimatedKernelNs)} | {Units.Ms(t.OutsideSyscallsNs)} | {(t.RusageSystemNs is { } s ? Units.Ms(s) : "")} | {Units.N(t.SyscallCalls)} | {Units.Ms(t.BlockedInSyscallsNs)} | {Units.Ms(t.ReadyInSyscallsNs)} | {calls} |");
        }
        sb.AppendLine();
    }

    public static void Convoys(StringBuilder sb, ConvoySection c)
    {
        sb.AppendLine("## Lock convoys").AppendLine();
        sb.AppendLine($"Objects named by {(c.ObjectSource == "syscalls" ? "the syscalls that wait on them" : "inference (no lock syscalls in the trace)")}; " +
            $"an episode is a chain of at least {c.MinEpisodeHandoffs} handoffs in which each giver is the previous receiver.");
        if (c.UnconfirmedHandoffs > 0) sb.AppendLine($"{Units.N(c.UnconfirmedHandoffs)} futex handoffs were still unconfirmed when the trace ended.");
        sb.AppendLine();
        if (c.Objects.Count == 0)
        {
            sb.AppendLine("No thread of the process waited on a lock object.").AppendLine();
            return;
        }
        sb.AppendLine("| object | handoffs | handoffs/s | acquisitions | handoff share | fast acquisitions | blocking waits | lost races | episodes | handoffs in convoys | convoy ms | convoy % of region | longest chain | gap p50 µs | gap p99 µs | queue wait p50 µs | participants |");
        sb.AppendLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
        foreach (var o in c.Objects)
            sb.AppendLine($"| {o.Object} | {Units.N(o.Handoffs)} | {o.HandoffsPerSecond.ToString("0", CultureInfo.InvariantCulture)} | {(o.Acquisitions is { } a ? Units.N(a) : "n/a")} | {Pct(o.HandoffShare)} | {Units.N(o.FastAcquisitions)} | {Units.N(o.BlockingWaits)} | {Units.N(o.LostRaces)} | {Units.N(o.Episodes)} | {Units.N(o.HandoffsInConvoys)} | {Units.Ms(o.ConvoyNs)} | {Pct(o.ConvoyShareOfRegion)} | {Units.N(o.LongestChain)} | {Units.Us(o.HandoffGap.P50Ns)} | {Units.Us(o.HandoffGap.P99Ns)} | {Units.Us(o.QueueWait.P50Ns)} | {string.Join(", ", o.Participants)} |");
        sb.AppendLine();
        sb.AppendLine("### Per-thread convoy report").AppendLine();
        sb.AppendLine("| tid | name | time in convoy ms | handoffs received | in convoys | handoffs given | lost races | queue wait p50 µs | ready p50 µs | ready p99 µs | received most from | handed most to |");
        sb.AppendLine("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|");
        foreach (var t in c.Threads)
            sb.AppendLine($"| {t.Tid} | {t.Name} | {Units.Ms(t.TimeInConvoyNs)} | {Units.N(t.HandoffsReceived)} | {Units.N(t.HandoffsReceivedInConvoys)} | {Units.N(t.HandoffsGiven)} | {Units.N(t.LostRaces)} | {Units.Us(t.QueueWait.P50Ns)} | {Units.Us(t.ReadyLatency.P50Ns)} | {Units.Us(t.ReadyLatency.P99Ns)} | {Partners(t.ReceivedFrom)} | {Partners(t.GivenTo)} |");
        sb.AppendLine();
    }

    public static void Wakeups(StringBuilder sb, WakeupSection w)
    {
        sb.AppendLine("## Wakeups").AppendLine();
        sb.AppendLine("Who woke whom (rows: woken thread; columns: waker; -1 = interrupt or idle context, 0 = any other thread):").AppendLine();
        sb.AppendLine("| woken | " + string.Join(" | ", w.Wakers) + " |");
        sb.AppendLine("|---|" + string.Concat(w.Wakers.Select(_ => "---:|")));
        foreach (var row in w.Matrix)
            sb.AppendLine($"| {row.Name} ({row.Woken}) | " + string.Join(" | ", row.Counts.Select(Units.N)) + " |");
        sb.AppendLine();
        sb.AppendLine($"Futile: woken, then blocked again after less than {w.FutileCpuThresholdNs / 1000} µs of CPU without progress (docs/metrics.md).").AppendLine();
        sb.AppendLine("| tid | name | wakeups | futile | futile % | spurious | same-CPU n | same-CPU p50 µs | p99 µs | cross-CPU n | cross-CPU p50 µs | p99 µs |");
        sb.AppendLine("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (var t in w.Threads)
            sb.AppendLine($"| {t.Tid} | {t.Name} | {Units.N(t.Wakeups)} | {Units.N(t.Futile)} | {Pct(t.FutileShare)} | {Units.N(t.Spurious)} | {Units.N(t.SameCpuLatency.Count)} | {Units.Us(t.SameCpuLatency.P50Ns)} | {Units.Us(t.SameCpuLatency.P99Ns)} | {Units.N(t.CrossCpuLatency.Count)} | {Units.Us(t.CrossCpuLatency.P50Ns)} | {Units.Us(t.CrossCpuLatency.P99Ns)} |");
        sb.AppendLine();
    }

    public static void Smp(StringBuilder sb, SmpSection s)
    {
        sb.AppendLine("## SMP").AppendLine();
        sb.AppendLine("| cpu | busy ms | idle ms | switches |");
        sb.AppendLine("|---:|---:|---:|---:|");
        foreach (var c in s.Cpus) sb.AppendLine($"| {c.Cpu} | {Units.Ms(c.BusyNs)} | {Units.Ms(c.IdleNs)} | {Units.N(c.Switches)} |");
        sb.AppendLine();
        var cpus = s.Cpus.Select(c => c.Cpu).ToList();
        sb.AppendLine("| tid | name | " + string.Join(" | ", cpus.Select(c => $"cpu{c} ms")) + " | migrations | cpu changes | wakeups recv same-CPU | cross-CPU | given same-CPU | cross-CPU | runnable while a CPU idle ms |");
        sb.AppendLine("|---:|---|" + string.Concat(cpus.Select(_ => "---:|")) + "---:|---:|---:|---:|---:|---:|---:|");
        foreach (var t in s.Threads)
            sb.AppendLine($"| {t.Tid} | {t.Name} | " + string.Join(" | ", cpus.Select(c => Units.Ms(c < t.ResidencyNs.Count ? t.ResidencyNs[c] : 0))) +
                $" | {Units.N(t.Migrations)} | {Units.N(t.CpuChanges)} | {Units.N(t.WakeupsReceivedSameCpu)} | {Units.N(t.WakeupsReceivedCrossCpu)} | {Units.N(t.WakeupsGivenSameCpu)} | {Units.N(t.WakeupsGivenCrossCpu)} | {Units.Ms(t.RunnableWhileIdleNs)} |");
        sb.AppendLine();
        sb.AppendLine($"Process totals: {Units.N(s.Totals.Migrations)} migrations, {Units.N(s.Totals.CpuChanges)} CPU changes, {Units.N(s.Totals.WakeupsReceivedCrossCpu)} of {Units.N(s.Totals.WakeupsReceived)} wakeups received across CPUs.").AppendLine();
    }

    public static void WaitGraph(StringBuilder sb, WaitGraphSection g)
    {
        sb.AppendLine("## Wait-for graph").AppendLine();
        sb.AppendLine($"The process's threads waited {Units.Ms(g.WaitNs)} ms in all; cascaded (wPerf) attribution of that time:").AppendLine();
        sb.AppendLine("| waited on | ms | share |");
        sb.AppendLine("|---|---:|---:|");
        foreach (var v in g.WaitedOn) sb.AppendLine($"| {v.Name} | {Units.Ms(v.WeightNs)} | {Pct(v.Share)} |");
        sb.AppendLine();
        if (g.Knots.Count == 0) sb.AppendLine($"No knot (edges of at least {Units.Us(g.KnotMinEdgeWeightNs)} µs).");
        foreach (var k in g.Knots)
            sb.AppendLine($"- Knot{(k.IsSink ? " (sink)" : "")}: {string.Join(", ", k.Names)} — {Units.Ms(k.InternalWeightNs)} ms of waits among them ({Pct(k.ShareOfWait)} of the process's wait time)");
        sb.AppendLine();
        sb.AppendLine("| from | to | ms | waits |");
        sb.AppendLine("|---:|---|---:|---:|");
        foreach (var e in g.Edges) sb.AppendLine($"| {e.From} | {e.ToName} | {Units.Ms(e.WeightNs)} | {Units.N(e.Count)} |");
        sb.AppendLine();
    }

    private static string Partners(List<WakerSection> list) => string.Join(", ", list.Select(p => $"{p.Tid} ×{Units.N(p.Count)}"));

    private static string Pct(double? share) => share is { } s ? (s * 100).ToString("0.0", CultureInfo.InvariantCulture) + "%" : "n/a";
}
