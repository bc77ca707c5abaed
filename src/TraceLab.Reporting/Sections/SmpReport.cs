using TraceLab.Analyzers;
using TraceLab.Analyzers.Smp;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Sections;

/// <summary>The "smp" analysis in the report: CPU residency, migrations, wakeups by CPU placement.</summary>
public sealed class SmpReport() : AnalysisReport<SmpAnalyzer, SmpSection>(Analyses.Smp, "smp")
{
    protected override SmpSection Build(SmpAnalyzer smp, ReportContext context) =>
        SmpSectionBuilder.Build(smp, context.Tids, context.Names);

    protected override IReadOnlyList<ReportBlock> View(SmpSection s)
    {
        // Up to 4 CPUs the terminal says them in one line and gives each a residency column; beyond that (a
        // whole machine) the per-CPU table replaces the line and the residency columns stay in report.md, so the
        // widest table fits 160 columns.
        var few = s.Cpus.Count <= MaxTerminalCpuColumns;
        var cpuTable = new ReportTable("CPUs", [new("cpu"), new("busy ms"), new("idle ms"), new("switches")])
        {
            RowNoun = "CPUs",
            In = few ? Shown.Markdown : Shown.Everywhere,
        };
        foreach (var c in s.Cpus)
            cpuTable.Add(Format.Int(c.Cpu), Units.Ms(c.BusyNs), Units.Ms(c.IdleNs), Units.N(c.Switches));

        var cpus = s.Cpus.Select(c => c.Cpu).ToList();
        List<Column> heads = [new("tid"), Column.Left("name")];
        heads.AddRange(cpus.Select(c => new Column($"cpu{c} ms", In: few ? Shown.Everywhere : Shown.Markdown)));
        heads.AddRange(
        [
            new("migrations", TerminalHeading: "migr"), new("cpu changes", TerminalHeading: "cpu chg"),
            new("wakeups recv same-CPU", TerminalHeading: "wk recv same"), new("cross-CPU", TerminalHeading: "cross"),
            new("given same-CPU", TerminalHeading: "wk given same"), new("cross-CPU", TerminalHeading: "cross"),
            new("runnable while a CPU idle ms", TerminalHeading: "rdy while idle ms"),
        ]);
        var threads = new ReportTable("SMP: CPU residency, migrations, wakeups by CPU placement", heads)
        {
            RowNoun = "threads",
        };
        threads.AddThreadRows(s.Threads, t => t.Tid, t =>
        [
            Format.Tid(t.Tid), t.Name,
            .. cpus.Select(c => (Cell)Units.Ms(c < t.ResidencyNs.Count ? t.ResidencyNs[c] : 0)),
            Units.N(t.Migrations), Units.N(t.CpuChanges), Units.N(t.WakeupsReceivedSameCpu),
            Units.N(t.WakeupsReceivedCrossCpu), Units.N(t.WakeupsGivenSameCpu), Units.N(t.WakeupsGivenCrossCpu),
            Units.Ms(t.RunnableWhileIdleNs),
        ]);

        var cpuLine = string.Join("  ", s.Cpus.Select(c =>
            $"cpu{c.Cpu}: busy {Units.Ms(c.BusyNs)} ms, idle {Units.Ms(c.IdleNs)} ms, {Units.N(c.Switches)} switches"));
        return
        [
            new MarkdownText("## SMP", ""),
            new TableBlock(cpuTable),
            new TableBlock(threads),
            new MarkdownText(
                $"Process totals: {Units.N(s.Totals.Migrations)} migrations, {Units.N(s.Totals.CpuChanges)} " +
                $"CPU changes, {Units.N(s.Totals.WakeupsReceivedCrossCpu)} of {Units.N(s.Totals.WakeupsReceived)} " +
                "wakeups received across CPUs.", ""),
            .. few ? [new TerminalLine("[bold]CPUs[/] " + Format.Escape(cpuLine))] : Array.Empty<ReportBlock>(),
        ];
    }

    /// <summary>The most CPUs whose residency columns the terminal shows.</summary>
    public const int MaxTerminalCpuColumns = 4;
}
