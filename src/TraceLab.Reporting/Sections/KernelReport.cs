using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Kernel;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Sections;

/// <summary>The "kernel" analysis in the report: time in traced syscalls per thread.</summary>
public sealed class KernelReport() : AnalysisReport<KernelTimeAnalyzer, KernelSection>(Analyses.Kernel, "kernel")
{
    protected override KernelSection Build(KernelTimeAnalyzer k, ReportContext context) =>
        KernelSectionBuilder.Build(k, context.Accounting, context.Tids, context.Names, context.Workload);

    protected override IReadOnlyList<ReportBlock> View(KernelSection k)
    {
        if (!k.Captured)
        {
            return
            [
                new MarkdownText("## Kernel time", "", k.Note ?? "", ""),
                new TerminalLine($"[bold]Kernel time[/] {Format.Escape(k.Note ?? "not captured")}"),
            ];
        }
        var ratio = k.RusageSystemNs is { } r && r > 0
            ? ((double)k.EstimatedKernelNs / r).ToString("0.00", CultureInfo.InvariantCulture)
            : null;
        var intro = "In syscalls: on CPU between sys_enter and sys_exit " +
            $"({Units.Ms(k.KernelCpuNs)} ms). Kernel estimate: plus {k.BoundaryNsPerCall} ns per call for the " +
            $"entry/exit paths, {k.BoundaryNsPerOffCpuCall} ns per call " +
            $"that was switched out (1st percentiles of {Units.N(k.BoundarySamples)} and " +
            $"{Units.N(k.BoundaryOffCpuSamples)} exit→enter gaps): {Units.Ms(k.EstimatedKernelNs)} ms" +
            (ratio is null ? "." : $"; the workload's getrusage system time: {Units.Ms(k.RusageSystemNs!.Value)} ms " +
                $"(estimate/rusage = {ratio}).");
        List<string> notes = [intro];
        if (k.UnmatchedExits > 0)
        {
            notes.Add($"{Units.N(k.UnmatchedExits)} syscall exits had no entry in the trace " +
                "(in progress when tracing started).");
        }
        notes.Add("");

        var table = new ReportTable("Kernel time (traced syscalls)",
        [
            new("tid"), Column.Left("name"), new("run ms"), new("in syscalls ms"), new("kernel est. ms"),
            new("outside syscalls ms", TerminalHeading: "outside ms"),
            // Without the workload's getrusage (a whole system) the column is empty: the terminal leaves it out.
            new("sys ms (rusage)", TerminalHeading: "sys ms*",
                In: k.Threads.Any(t => t.RusageSystemNs is not null) ? Shown.Everywhere : Shown.Markdown),
            new("calls"), new("blocked in syscalls ms", TerminalHeading: "blocked ms"),
            new("ready in syscalls ms", TerminalHeading: "ready ms"),
            Column.Left("syscalls (calls, cpu/blocked/ready ms)", "top syscalls (calls, cpu ms, blocked ms)"),
        ])
        { RowNoun = "threads" };
        table.AddThreadRows(k.Threads, t => t.Tid, t =>
        [
            Format.Tid(t.Tid), t.Name, Units.Ms(t.RunNs), Units.Ms(t.KernelCpuNs),
            Units.Ms(t.EstimatedKernelNs), Units.Ms(t.OutsideSyscallsNs),
            t.RusageSystemNs is { } s ? Units.Ms(s) : "", Units.N(t.SyscallCalls),
            Units.Ms(t.BlockedInSyscallsNs), Units.Ms(t.ReadyInSyscallsNs),
            new(string.Join("; ", t.Syscalls.Select(s => $"{Calls(s)}/{Units.Ms(s.ReadyNs)}")),
                Short(string.Join("; ", t.Syscalls.Take(3).Select(Calls)), 40)),
        ]);

        var compare = ratio is null
            ? ""
            : $"; the workload's getrusage system time {Units.Ms(k.RusageSystemNs!.Value)} ms " +
                $"(estimate/rusage = {ratio})";
        return
        [
            new MarkdownText(["## Kernel time", "", .. notes]),
            new TableBlock(table),
            new TerminalLine("[grey]in syscalls: on CPU between sys_enter and sys_exit, " +
                $"{Units.Ms(k.KernelCpuNs)} ms in all; kernel est.: + {k.BoundaryNsPerCall} ns per call for the " +
                "entry/exit paths, " +
                $"{k.BoundaryNsPerOffCpuCall} ns per call that was switched out ({Units.N(k.BoundarySamples)} / " +
                $"{Units.N(k.BoundaryOffCpuSamples)} exit→enter gaps), {Units.Ms(k.EstimatedKernelNs)} ms" +
                $"{Format.Escape(compare)}. * sys: getrusage(RUSAGE_THREAD)[/]"),
        ];
    }

    /// <summary>"futex ×1,234 5.0/6.0": calls, CPU ms and blocked ms.</summary>
    private static string Calls(SyscallSection s) =>
        $"{s.Name} ×{Units.N(s.Calls)} {Units.Ms(s.CpuNs)}/{Units.Ms(s.BlockedNs)}";

    /// <summary>Terminal text cut to <paramref name="max"/> characters, so the table fits 160 columns.</summary>
    private static string Short(string text, int max) => text.Length <= max ? text : text[..(max - 1)] + "…";
}
