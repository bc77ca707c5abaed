using Spectre.Console;
using TraceLab.Cli;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using TraceLab.Reporting.Sections;
using TraceLab.Workloads;

namespace TraceLab.Tests.Cli;

/// <summary>
/// Every line of the terminal report fits 160 columns (docs/metrics.md#terminal-width) when the output is redirected to
/// a file, where the console has no width of its own: process headings, per-process thread tables, long warnings.
/// </summary>
public sealed class TerminalReportWidthTests
{
    /// <summary>The terminal report as `tracelab analyze FILE &gt; out.txt` writes it (plain text, no width).</summary>
    private static List<string> Redirected(RunReport report)
    {
        var text = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(text),
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
        });
        TerminalReport.Render(TerminalWidth.Limit(console, redirected: true), report);
        return [.. text.ToString().Split('\n').Select(l => l.TrimEnd('\r'))];
    }

    /// <summary>Characters, not bytes: the tables' borders and "⚠" are one column each.</summary>
    private static void AssertFits(List<string> lines)
    {
        var widest = lines.OrderByDescending(l => l.Length).First();
        Assert.True(widest.Length <= TerminalLineFit.Width, $"{widest.Length} columns: {widest}");
    }

    [Theory]
    [InlineData("timemutex-mutex", "trace.dat")]
    [InlineData("timemutex-cs", "trace.dat")]
    [InlineData("perf-timemutex-mutex", "capture.perf.data")]
    public void The_sample_traces_terminal_report_fits_160_columns(string sample, string trace)
    {
        var dir = Path.Combine(RepoPaths.SampleTraces, sample);
        var workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(dir, "workload.json")), "workload.json");
        var report = TraceAnalysis.Analyze(Path.Combine(dir, trace), workload, pid: null);

        AssertFits(Redirected(report));
    }

    /// <summary>System-wide traces without a target: the top processes' headings and their thread tables.</summary>
    [ExternalTraceTheory(
        "tracecmd/hip24_test_guest_v7zlib.dat", "tracecmd/hip24_taskset_guest_v7zlib.dat",
        "tracecmd/hip24_test_host_kvm_v7zlib.dat", "tracecmd/lisa_example_rtapp_v6.dat",
        "tracecmd/lisa_trappy_tests_trace_v6.dat", "perf/perfparser_parallel_static_gcc.zstd.perf.data",
        "etw/etlparser_ShutdownPerfDiagLogger.etl")]
    [InlineData("tracecmd/hip24_test_guest_v7zlib.dat")]
    [InlineData("tracecmd/hip24_taskset_guest_v7zlib.dat")]
    [InlineData("tracecmd/hip24_test_host_kvm_v7zlib.dat")]
    [InlineData("tracecmd/lisa_example_rtapp_v6.dat")]
    [InlineData("tracecmd/lisa_trappy_tests_trace_v6.dat")]
    [InlineData("perf/perfparser_parallel_static_gcc.zstd.perf.data")]
    [InlineData("etw/etlparser_ShutdownPerfDiagLogger.etl")]
    public void An_external_traces_terminal_report_fits_160_columns(string relative)
    {
        var report = TraceAnalysis.Analyze(ExternalTraces.PathOf(relative), null, pid: null);

        AssertFits(Redirected(report));
    }

    /// <summary>
    /// A lossy system trace's shape: hundreds of threads named in one warning, and a 40-character thread name
    /// (ETW's are not cut at 15 like a comm). Before the rule the console wrapped these at 220 columns.
    /// </summary>
    [Fact]
    public void A_lossy_many_thread_report_fits_160_columns_and_keeps_every_tid_on_the_terminal()
    {
        var tids = Enumerable.Range(20_000, 400).ToList();
        var report = new RunReport
        {
            Capture = new CaptureSection { Backend = "perf", TraceFile = "lossy.perf.data", LostEvents = 666_496 },
            Region = new RegionSection { Source = "whole-trace" },
            Analyses = ["threads"],
            Threads = tids.Select(tid => new ThreadSection
            {
                Tid = tid,
                Name = tid == 20_000 ? "Microsoft.CodeAnalysis.CSharp.Worker.Pool" : $"worker-{tid}",
                ReadyNs = (tid == 20_000 ? 10_000 : tid % 97) * 1_000_000L,
                ReadyLatency = new LatencySection(),
            }).ToList(),
            Warnings = [$"events were lost on CPU 0, 1: the figures of threads {string.Join(", ", tids)}, " +
                "which ran there, may be affected (marked ⚠ in report.md)"],
        };

        var lines = Redirected(report);

        AssertFits(lines);
        var text = string.Join(" ", lines);
        Assert.All(tids, tid => Assert.Contains($"{tid},", text, StringComparison.Ordinal));
        Assert.Contains("Microsoft.CodeAnalysis", text, StringComparison.Ordinal);
    }

    /// <summary>
    /// The sample's threads table (16 columns) is too wide with its names: low-priority columns leave.
    /// </summary>
    [Fact]
    public void A_too_wide_threads_table_leaves_out_its_low_priority_columns_and_says_so_report_md_keeps_them()
    {
        var dir = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex");
        var workload = WorkloadResult.Parse(File.ReadAllText(Path.Combine(dir, "workload.json")), "workload.json");
        var report = TraceAnalysis.Analyze(Path.Combine(dir, "trace.dat"), workload, pid: null);

        var lines = Redirected(report);

        var heading = lines.First(l => l.Contains("│ name", StringComparison.Ordinal)
            && l.Contains("ready ms", StringComparison.Ordinal));
        Assert.DoesNotContain("max µs", heading, StringComparison.Ordinal);
        Assert.Contains("p99 µs", heading, StringComparison.Ordinal);
        Assert.Contains(lines, l => l.StartsWith("max µs", StringComparison.Ordinal)
            && l.EndsWith("left out for width (report.md)", StringComparison.Ordinal));
        // A row is one line: no thread name wrapped inside its cell.
        Assert.Contains(lines, l => l.Contains("│ timemutex (worker 0) │", StringComparison.Ordinal));
        Assert.Contains("| max µs |", ReportMarkdown.Render(report), StringComparison.Ordinal);
    }
}
