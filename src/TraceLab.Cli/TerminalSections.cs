using System.Globalization;
using Spectre.Console;
using TraceLab.Reporting;
using TraceLab.Reporting.Sections;

namespace TraceLab.Cli;

/// <summary>The kernel-time, convoy and wakeup sections of the report, on the terminal.</summary>
internal static class TerminalSections
{
    private const int MaxObjects = 8;

    public static void Kernel(IAnsiConsole console, KernelSection k)
    {
        if (!k.Captured)
        {
            console.MarkupLine($"[bold]Kernel time[/] {Markup.Escape(k.Note ?? "not captured")}");
            return;
        }
        var table = Table("Kernel time (traced syscalls)", "tid", "name", "run ms", "in syscalls ms", "kernel est. ms", "outside ms", "sys ms*", "calls", "blocked ms", "ready ms", "top syscalls (calls, cpu ms, blocked ms)");
        foreach (var t in k.Threads)
        {
            var top = string.Join("; ", t.Syscalls.Take(3).Select(s => $"{s.Name} ×{s.Calls:N0} {Ms(s.CpuNs)}/{Ms(s.BlockedNs)}"));
            table.AddRow(t.Tid.ToString(CultureInfo.InvariantCulture), Markup.Escape(t.Name), Ms(t.RunNs), Ms(t.KernelCpuNs), Ms(t.EstimatedKernelNs), Ms(t.OutsideSyscallsNs),
                t.RusageSystemNs is { } sys ? Ms(sys) : "", t.SyscallCalls.ToString("N0", CultureInfo.InvariantCulture),
                Ms(t.BlockedInSyscallsNs), Ms(t.ReadyInSyscallsNs), Markup.Escape(top));
        }
        console.Write(table);
        var compare = k.RusageSystemNs is { } r && r > 0
            ? $"; the workload's getrusage system time {Ms(r)} ms (estimate/rusage = {(double)k.EstimatedKernelNs / r:0.00})"
            : "";
        console.MarkupLine($"[grey]in syscalls: on CPU between sys_enter and sys_exit, {Ms(k.KernelCpuNs)} ms in all; kernel est.: + {k.BoundaryNsPerCall} ns per call for the entry/exit paths, " +
            $"{k.BoundaryNsPerOffCpuCall} ns per call that was switched out ({N(k.BoundarySamples)} / {N(k.BoundaryOffCpuSamples)} exit→enter gaps), {Ms(k.EstimatedKernelNs)} ms{Markup.Escape(compare)}. * sys: getrusage(RUSAGE_THREAD)[/]");
    }

    public static void Convoys(IAnsiConsole console, ConvoySection c)
    {
        if (c.Objects.Count == 0)
        {
            console.MarkupLine($"[bold]Lock convoys[/] none: no thread of the process waited on a lock object ({c.ObjectSource})");
            return;
        }
        var objects = Table($"Lock objects ({c.ObjectSource}; episode = ≥{c.MinEpisodeHandoffs} chained handoffs)", "object", "handoffs", "/s",
            "handoff share", "blocking waits", "lost races", "episodes", "convoy % of region", "longest chain", "gap p50 µs", "p99 µs", "participants");
        foreach (var o in c.Objects.Take(MaxObjects))
            objects.AddRow(Markup.Escape(o.Object), N(o.Handoffs), o.HandoffsPerSecond.ToString("N0", CultureInfo.InvariantCulture),
                o.HandoffShare is { } s ? s.ToString("P1", CultureInfo.InvariantCulture) : "n/a", N(o.BlockingWaits), N(o.LostRaces), N(o.Episodes),
                o.ConvoyShareOfRegion.ToString("P1", CultureInfo.InvariantCulture), N(o.LongestChain), Us(o.HandoffGap.P50Ns), Us(o.HandoffGap.P99Ns),
                o.Participants.Count.ToString(CultureInfo.InvariantCulture));
        console.Write(objects);

        var threads = Table("Per-thread convoy report", "tid", "name", "in convoy ms", "handoffs recv", "given", "lost races", "queue wait p50 µs",
            "ready p50 µs", "p99 µs", "received most from", "handed most to");
        foreach (var t in c.Threads)
            threads.AddRow(t.Tid.ToString(CultureInfo.InvariantCulture), Markup.Escape(t.Name), Ms(t.TimeInConvoyNs), N(t.HandoffsReceived),
                N(t.HandoffsGiven), N(t.LostRaces), Us(t.QueueWait.P50Ns), Us(t.ReadyLatency.P50Ns), Us(t.ReadyLatency.P99Ns),
                Partners(t.ReceivedFrom), Partners(t.GivenTo));
        console.Write(threads);
    }

    public static void Wakeups(IAnsiConsole console, WakeupSection w)
    {
        var heads = new List<string> { "woken \\ waker" };
        heads.AddRange(w.Wakers.Select(x => x switch { -1 => "irq/idle", 0 => "other", _ => x.ToString(CultureInfo.InvariantCulture) }));
        var matrix = Table("Who woke whom (wakeups in the region)", [.. heads]);
        foreach (var row in w.Matrix)
            matrix.AddRow([Markup.Escape($"{row.Name} ({row.Woken})"), .. row.Counts.Select(n => n == 0 ? "·" : N(n))]);
        console.Write(matrix);

        var table = Table($"Wakeups (futile: blocked again after < {w.FutileCpuThresholdNs / 1000} µs CPU without progress)", "tid", "name", "wakeups",
            "futile", "futile %", "spurious", "same-CPU n", "p50 µs", "p99 µs", "cross-CPU n", "p50 µs", "p99 µs");
        foreach (var t in w.Threads)
            table.AddRow(t.Tid.ToString(CultureInfo.InvariantCulture), Markup.Escape(t.Name), N(t.Wakeups), N(t.Futile),
                t.FutileShare.ToString("P1", CultureInfo.InvariantCulture), N(t.Spurious),
                N(t.SameCpuLatency.Count), Us(t.SameCpuLatency.P50Ns), Us(t.SameCpuLatency.P99Ns),
                N(t.CrossCpuLatency.Count), Us(t.CrossCpuLatency.P50Ns), Us(t.CrossCpuLatency.P99Ns));
        console.Write(table);
    }

    public static void Smp(IAnsiConsole console, SmpSection s)
    {
        var cpus = s.Cpus.Select(c => c.Cpu).ToList();
        var heads = new List<string> { "tid", "name" };
        heads.AddRange(cpus.Select(c => $"cpu{c} ms"));
        heads.AddRange(["migr", "cpu chg", "wk recv same", "cross", "wk given same", "cross", "rdy while idle ms"]);
        var table = Table("SMP: CPU residency, migrations, wakeups by CPU placement", [.. heads]);
        foreach (var t in s.Threads)
            table.AddRow([t.Tid.ToString(CultureInfo.InvariantCulture), Markup.Escape(t.Name),
                .. cpus.Select(c => Ms(c < t.ResidencyNs.Count ? t.ResidencyNs[c] : 0)),
                N(t.Migrations), N(t.CpuChanges), N(t.WakeupsReceivedSameCpu), N(t.WakeupsReceivedCrossCpu), N(t.WakeupsGivenSameCpu),
                N(t.WakeupsGivenCrossCpu), Ms(t.RunnableWhileIdleNs)]);
        console.Write(table);
        console.MarkupLine("[bold]CPUs[/] " + Markup.Escape(string.Join("  ", s.Cpus.Select(c => $"cpu{c.Cpu}: busy {Ms(c.BusyNs)} ms, idle {Ms(c.IdleNs)} ms, {N(c.Switches)} switches"))));
    }

    public static void WaitGraph(IAnsiConsole console, WaitGraphSection g)
    {
        var table = Table($"Wait-for graph: what the process waited on ({Ms(g.WaitNs)} ms of waiting, cascaded)", "waited on", "ms", "share");
        foreach (var v in g.WaitedOn)
            table.AddRow(Markup.Escape(v.Name), Ms(v.WeightNs), v.Share.ToString("P1", CultureInfo.InvariantCulture));
        console.Write(table);
        foreach (var k in g.Knots)
            console.MarkupLine($"[bold]Knot[/]{(k.IsSink ? " (sink: the bottleneck is inside)" : "")}: {Markup.Escape(string.Join(", ", k.Names))} — " +
                $"{Ms(k.InternalWeightNs)} ms of waits among them, {k.ShareOfWait.ToString("P1", CultureInfo.InvariantCulture)} of the process's wait time");
    }

    private static Table Table(string title, params string[] heads)
    {
        var table = new Table().Border(TableBorder.Rounded).Title($"[bold]{Markup.Escape(title)}[/]");
        foreach (var h in heads)
            table.AddColumn(new TableColumn(Markup.Escape(h)) { Alignment = h is "name" or "object" || h.Contains("most", StringComparison.Ordinal) || h.StartsWith("top", StringComparison.Ordinal) || h.StartsWith("woken", StringComparison.Ordinal) ? Justify.Left : Justify.Right });
        return table;
    }

    private static string Partners(List<WakerSection> list) =>
        Markup.Escape(string.Join(", ", list.Select(p => $"{p.Tid} ×{p.Count:N0}")));

    private static string N(long n) => n.ToString("N0", CultureInfo.InvariantCulture);
    private static string Ms(long ns) => (ns / 1e6).ToString("0.0", CultureInfo.InvariantCulture);
    private static string Us(long ns) => (ns / 1e3).ToString("0.0", CultureInfo.InvariantCulture);
}
