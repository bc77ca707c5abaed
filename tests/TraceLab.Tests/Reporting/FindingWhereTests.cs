using TraceLab.Reporting;
using TraceLab.Reporting.Findings;
using TraceLab.Reporting.Stacks;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// A finding's <c>where</c> (docs/metrics.md#finding-where) on a hand-built report whose sums are known: the place
/// with the most blocked time over the finding's processes, named user frames only, innermost first.
/// </summary>
public sealed class FindingWhereTests
{
    private static FrameEntry Frame(string module, string? symbol) =>
        new() { Address = "0x1", Module = module, Symbol = symbol, Offset = "0x0" };

    private static StackEntry OffCpu(int process, double ms, params FrameEntry[] frames) =>
        new() { Process = process, Count = 1, Ms = ms, Frames = [.. frames] };

    private static ThreadSection Thread(int tid, int pid) =>
        new() { Tid = tid, Pid = pid, Name = "t", ReadyLatency = new LatencySection() };

    private static FindingSection Finding(string kind, params int[] threads) =>
        new() { Kind = kind, Title = "t", Remedy = "r", Threads = [.. threads] };

    [Fact]
    public void The_heaviest_place_summed_over_the_findings_processes_names_where_they_waited()
    {
        var kernel = Frame("[kernel.kallsyms]", "schedule");
        var report = new RunReport
        {
            Capture = new CaptureSection { Backend = "tracefs", TraceFile = "trace.dat" },
            Region = new RegionSection { Source = "target" },
            Threads = [Thread(11, 10), Thread(21, 20), Thread(31, 30)],
            Stacks = new StacksSection
            {
                OffCpu =
                [
                    // One place in two processes (5 + 4 ms) outweighs a heavier single stack elsewhere (6 ms); an
                    // unnamed frame is left out of the place.
                    OffCpu(10, 5, kernel, Frame("libc.so.6", "epoll_wait"), Frame("postgres", null),
                        Frame("postgres", "ProcSleep"), Frame("postgres", "XactLockTableWait")),
                    OffCpu(20, 4, kernel, Frame("libc.so.6", "epoll_wait"), Frame("postgres", "ProcSleep"),
                        Frame("postgres", "XactLockTableWait")),
                    OffCpu(10, 6, kernel, Frame("libc.so.6", "read"), Frame("postgres", "secure_read")),
                    // A process outside the finding.
                    OffCpu(30, 50, kernel, Frame("libc.so.6", "nanosleep"), Frame("postgres", "pg_usleep")),
                ],
            },
            Findings = [Finding("lock-convoy", 11, 21), Finding("oversubscription", 11, 21), Finding("serialization")],
        };

        StacksReportBuilder.NameLocksInFindings(report);

        Assert.Equal("epoll_wait ← ProcSleep ← XactLockTableWait", report.Findings![0].Where);
        // About the CPU, not waiting; and one without threads: no place.
        Assert.Null(report.Findings[1].Where);
        Assert.Null(report.Findings[2].Where);
        var md = string.Join('\n', FindingsMarkdown.Markdown(report.Findings, hasSwitches: true));
        Assert.Contains("- Where (heaviest blocking stack of these threads, innermost first): " +
            "`epoll_wait ← ProcSleep ← XactLockTableWait`", md, StringComparison.Ordinal);
    }
}
