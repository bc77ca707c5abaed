using TraceLab.Core;
using TraceLab.Reporting;
using TraceLab.Reporting.Findings;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// A trace without context switches (PerfView's default kernel keywords, a WPR profile without CSwitch, `perf record`
/// of other events): every run, ready and wait figure is then inferred from the events threads logged, and no lock
/// wait can be seen. The report must say so where the user looks first (findings, warnings), not "no findings".
/// </summary>
public sealed class NoSwitchesReportTests
{
    private const long Us = SystemScript.Us;

    private static SystemScript Script(bool withSwitches)
    {
        var a = (Tid: 101, Name: "worker");
        var b = (Tid: 102, Name: "worker");
        var s = new SystemScript();
        // Two threads of one process logging events on CPU 0 and 1; with switches, also their switch-ins and outs.
        s.Add(KernelEvent.Fork(0, 0, a.Tid, b.Tid), a, b);
        if (withSwitches)
        {
            s.Switch(1 * Us, 0, (0, "swapper/0"), 0, a);
            s.Switch(1 * Us, 1, (0, "swapper/1"), 0, b);
            s.Switch(500 * Us, 0, a, 1, (0, "swapper/0"));
            s.Switch(900 * Us, 1, b, 1, (0, "swapper/1"));
        }
        s.Add(KernelEvent.Waking(400 * Us, 0, a.Tid, b.Tid, 1), a, b);
        s.Add(KernelEvent.Waking(800 * Us, 1, b.Tid, a.Tid, 0), b, a);
        return s;
    }

    [Fact]
    public void Without_switches_the_findings_say_nothing_can_be_judged_and_a_warning_says_why()
    {
        var report = Script(withSwitches: false).Report();
        Assert.Equal(0, report.Capture.SwitchEvents);
        Assert.NotNull(report.Findings);
        Assert.Empty(report.Findings!);
        Assert.Contains(
            report.Warnings, w => w.StartsWith("the trace has no context switches", StringComparison.Ordinal));

        var md = ReportMarkdown.Render(report);
        Assert.Contains($"No findings can be judged: {FindingsMarkdown.NoSwitches} (see the warnings).", md);
        Assert.DoesNotContain("No findings above the floor", md);
        var terminal = SystemOverviewTests.Terminal(report);
        Assert.Contains(terminal, l => l.StartsWith("Findings none can be judged: the trace has no context switches",
            StringComparison.Ordinal));
        Assert.Contains(
            terminal, l => l.Contains("warning: the trace has no context switches", StringComparison.Ordinal));
    }

    [Fact]
    public void With_switches_neither_the_warning_nor_the_findings_note_appears()
    {
        var report = Script(withSwitches: true).Report();
        Assert.Equal(4, report.Capture.SwitchEvents);
        Assert.DoesNotContain(report.Warnings, w => w.Contains("no context switches", StringComparison.Ordinal));
        var md = ReportMarkdown.Render(report);
        Assert.DoesNotContain("can be judged", md);
        Assert.Contains("No findings above the floor", md);
    }
}
