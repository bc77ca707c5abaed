using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Analyzers;
using TraceLab.Cli;
using TraceLab.Formats.Registry;

namespace TraceLab.Tests.Cli;

/// <summary>
/// `tracelab bench` prints one line per measurement that scripts parse (tools/bench-ab.sh, tools/bench.sh): each fits
/// the terminal's 160 columns whatever analyses were chosen (they are named on a line of their own), and its figures
/// agree with one another (events/s is the events over the best time).
/// </summary>
public sealed partial class BenchOutputTests
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");

    [GeneratedRegex(@"^(?<what>read \(decode \+ merge\)|read \+ analysis, one thread|read \+ analysis, reader \+ 1 " +
        @"analysis thread\(s\)) +best (?<best>\d+\.\d{3}) s +(?<rate>\d+\.\d) M events/s +\d+\.\d MB/s +median " +
        @"\d+\.\d{3} s +CPU best \d+\.\d{3} s = \d+ ns/event$")]
    private static partial Regex FiguresLine();

    [GeneratedRegex(@"^  in the run of least CPU: (?<g0>\d+) gen0, (?<g1>\d+) gen1, (?<g2>\d+) gen2 collections, " +
        @"\d+\.\d MB allocated$")]
    private static partial Regex CollectionsLine();

    [GeneratedRegex(@"^trace .*: [\d.]+ MB, (?<events>[\d,]+) events;")]
    private static partial Regex TraceLine();

    [GeneratedRegex(@"^heap: (4 KiB pages|transparent huge pages|4 KiB pages, the huge pages chosen not given) \(" +
        @"(new memory here: \d+\.\d µs a 4 KiB page, .+|not timed: .+)\)$")]
    private static partial Regex HeapLine();

    [Fact]
    public void The_heaps_pages_are_said_as_decided()
    {
        var (code, output, err) = ProcessOutput.Run("env",
            ["TRACELAB_HUGE_PAGES=0", "dotnet", Tool, "bench", Sample, "--repeat", "1", "--analysis-threads", "0"]);
        Assert.True(code == 0, err);
        Assert.Contains("heap: 4 KiB pages (TRACELAB_HUGE_PAGES=0)", output.Split('\n'));
        Assert.Equal("transparent huge pages (TRACELAB_HUGE_PAGES=1)",
            HugePageHeap.Summarize(((4096L << 20, 512L << 20), "TRACELAB_HUGE_PAGES=1")));
        Assert.Equal("4 KiB pages, the huge pages chosen not given (TRACELAB_HUGE_PAGES=1)",
            HugePageHeap.Summarize(((0, 0), "TRACELAB_HUGE_PAGES=1")));
    }

    [Fact]
    public void Every_measurement_is_one_line_within_the_terminal_width_with_the_analyses_on_their_own_line()
    {
        var (code, output, err) = ProcessOutput.Run("dotnet",
            [Tool, "bench", Sample, "--repeat", "1", "--analysis", "all", "--analysis-threads", "1"]);
        Assert.True(code == 0, err);
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.All(lines, l => Assert.True(l.Length <= 160, l));
        Assert.Contains("analyses: threads,kernel,convoys,waits,wakeups,smp,waitgraph,findings", lines);
        // The heap's pages, as measured at start-up (they move the figures).
        Assert.Contains(lines, l => HeapLine().IsMatch(l));
        // The events the runs left out in front of the analyses, as a filter over the trace counts them.
        long leftOut;
        using (var reader = TraceFormats.All.Open(Sample, TraceReadOptions.Default))
            leftOut = RedundantEvidenceFilter.LeftOutOf(reader);
        Assert.True(leftOut > 0);
        Assert.Contains(lines, l => l.StartsWith(
            string.Create(CultureInfo.InvariantCulture, $"left out in front of the analyses: {leftOut:N0} events ("),
            StringComparison.Ordinal));
        var events = long.Parse(TraceLine().Match(lines[0]).Groups["events"].Value, NumberStyles.AllowThousands,
            CultureInfo.InvariantCulture);
        var figures = lines.Select(l => FiguresLine().Match(l)).Where(m => m.Success).ToList();
        Assert.Equal(
            ["read (decode + merge)", "read + analysis, one thread", "read + analysis, reader + 1 analysis thread(s)"],
            figures.Select(m => m.Groups["what"].Value));
        // Each figures line is followed by its run's collections: a gen2 is counted in gen1 and gen0 too.
        for (var i = 0; i < lines.Length; i++)
        {
            if (!FiguresLine().IsMatch(lines[i])) continue;
            var gc = CollectionsLine().Match(lines[i + 1]);
            Assert.True(gc.Success, lines[i + 1]);
            int Gen(string g) => int.Parse(gc.Groups[g].Value, CultureInfo.InvariantCulture);
            Assert.True(Gen("g0") >= Gen("g1") && Gen("g1") >= Gen("g2"), lines[i + 1]);
        }

        foreach (var m in figures)
        {
            var best = double.Parse(m.Groups["best"].Value, CultureInfo.InvariantCulture);
            var rate = double.Parse(m.Groups["rate"].Value, CultureInfo.InvariantCulture);
            // Both rounded for print: the best time to 1 ms, the rate to 0.1 M events/s.
            Assert.InRange(rate, events / (best + 0.0005) / 1e6 - 0.06,
                events / Math.Max(best - 0.0005, 1e-4) / 1e6 + 0.06);
        }
    }
}
