using System.Globalization;
using System.Text.RegularExpressions;
using TraceLab.Analyzers.Timeline;
using TraceLab.Reporting.Html;

namespace TraceLab.Tests.Html;

/// <summary>
/// report.html's thread timeline draws segments narrower than a pixel as stacked columns
/// (docs/metrics.md#timeline-columns): every segment is still counted, every state's time is in a tooltip, and the
/// picture has at most a column per pixel.
/// </summary>
public sealed partial class TimelineColumnTests
{
    private const long Us = 1_000;

    /// <summary>A 128 ms window (128 µs a pixel): thread 1 runs 3 µs, waits 2 µs for a CPU and blocks 120 µs, over and
    /// over; thread 2 runs and blocks in 10 ms steps; thread 3 has one short run between two long blocks.</summary>
    private static TimelineData Window()
    {
        var segments = new List<TimelineSegment>();
        for (long t = 0; t + 125 * Us <= 128_000 * Us; t += 125 * Us)
        {
            segments.Add(new(1, ThreadRunState.Running, t, t + 3 * Us, 0));
            segments.Add(new(1, ThreadRunState.Runnable, t + 3 * Us, t + 5 * Us, -1));
            segments.Add(new(1, ThreadRunState.Blocked, t + 5 * Us, t + 125 * Us, -1));
        }
        for (long t = 0; t < 120_000 * Us; t += 20_000 * Us)
        {
            segments.Add(new(2, ThreadRunState.Running, t, t + 10_000 * Us, 1));
            segments.Add(new(2, ThreadRunState.Blocked, t + 10_000 * Us, t + 20_000 * Us, -1));
        }
        segments.Add(new(3, ThreadRunState.Blocked, 0, 60_000 * Us, -1));
        segments.Add(new(3, ThreadRunState.Running, 60_000 * Us, 60_004 * Us, 1));
        segments.Add(new(3, ThreadRunState.Blocked, 60_004 * Us, 128_000 * Us, -1));
        return new TimelineData
        {
            Window = new TimelineWindow(0, 128_000 * Us),
            Start = 0,
            End = 128_000 * Us,
            Anchor = 0,
            Segments = segments,
            Wakes = [],
            Episodes = [],
            Handoffs = [],
            FutileWakeups = [],
        };
    }

    private static readonly TimelineRow[] Rows = [new(1, "busy (1)"), new(2, "slow (2)"), new(3, "lone (3)")];

    private static string Row(string svg, int tid) =>
        Regex.Match(svg, $"<g class=\"tl-row\" data-tid=\"{tid}\">.*?\n", RegexOptions.Singleline).Value;

    [Fact]
    public void Segments_narrower_than_a_pixel_become_at_most_one_column_per_pixel_and_each_is_counted()
    {
        var data = Window();
        var busy = Row(TimelineSvg.Render(data, Rows, tid => "t"), 1);
        var recorded = data.Segments.Count(s => s.Tid == 1);
        Assert.Equal(0, Regex.Count(busy, "<rect class=\"seg "));
        var columns = ColumnPattern().Matches(busy);
        Assert.Equal(recorded, columns.Sum(m => int.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture)));
        // 1,024 of each state in 1,000 pixels: the columns have the same stripes, so they merge into few bands.
        Assert.InRange(columns.Count, 1, TimelineSvg.PlotWidth);
        Assert.True(busy.Length < 20_000, $"{busy.Length:N0} characters for one row");
    }

    [Fact]
    public void The_columns_tooltips_hold_every_states_time_and_the_stripes_its_share()
    {
        var data = Window();
        var busy = Row(TimelineSvg.Render(data, Rows, tid => "t"), 1);
        double Sum(string state) => Regex.Matches(busy, $" {state} ([0-9.]+) µs")
            .Sum(m => double.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture));
        double Recorded(ThreadRunState state) =>
            data.Segments.Where(s => s.Tid == 1 && s.State == state).Sum(s => s.End - s.Start) / 1e3;
        // Each tooltip rounds to 0.1 µs.
        var columns = ColumnPattern().Count(busy);
        Assert.Equal(Recorded(ThreadRunState.Running), Sum("running"), 0.05 * columns + 1e-6);
        Assert.Equal(Recorded(ThreadRunState.Runnable), Sum("runnable"), 0.05 * columns + 1e-6);
        Assert.Equal(Recorded(ThreadRunState.Blocked), Sum("blocked"), 0.05 * columns + 1e-6);
        // About 3 + 2 + 120 µs of 24 px: running and runnable a pixel each (a state the column has keeps a pixel),
        // blocked the rest.
        var stripes = Regex.Matches(busy, "<rect class=\"(run|ready|blocked)\" [^>]*height=\"(\\d+)\"/>")
            .Select(m => (m.Groups[1].Value, int.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture))).Distinct()
            .ToList();
        Assert.Equal([("run", 1), ("ready", 1), ("blocked", 22)], stripes);
    }

    [Fact]
    public void Segments_a_pixel_wide_and_a_lone_narrow_one_are_drawn_as_before()
    {
        var svg = TimelineSvg.Render(Window(), Rows, tid => "t");
        var slow = Row(svg, 2);
        Assert.Equal(12, Regex.Count(slow, "<rect class=\"seg "));
        Assert.DoesNotContain("class=\"mix\"", slow, StringComparison.Ordinal);
        Assert.Contains("<title>running on CPU 1: 0.000–10.000 ms (10000.0 µs)</title>", slow,
            StringComparison.Ordinal);
        var lone = Row(svg, 3);
        Assert.DoesNotContain("class=\"mix\"", lone, StringComparison.Ordinal);
        Assert.Contains("<rect class=\"seg run\" x=\"698.75\" y=\"", lone, StringComparison.Ordinal);
        Assert.Contains("width=\"0.4\" height=\"24\"><title>running on CPU 1: 60.000–60.004 ms (4.0 µs)</title>", lone,
            StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(3_000, 2_000, 130_000, 1, 1, 22)]
    [InlineData(60_000, 60_000, 0, 12, 12, 0)]
    [InlineData(1, 0, 1_000_000, 1, 0, 23)]
    [InlineData(0, 0, 0, 0, 0, 24)]
    [InlineData(500, 250, 250, 12, 6, 6)]
    public void Stripes_share_the_row_by_time_in_whole_pixels(long running, long runnable, long blocked,
        int runningPx, int runnablePx, int blockedPx)
    {
        var column = new TimelineColumn();
        var t = 0L;
        foreach (var (state, ns) in new[]
            {
                (ThreadRunState.Running, running), (ThreadRunState.Runnable, runnable),
                (ThreadRunState.Blocked, blocked),
            })
        {
            // A zero-length blocked segment only when the column has nothing else.
            if (ns == 0 && (state != ThreadRunState.Blocked || running + runnable > 0)) continue;
            column.Add(0, new TimelineSegment(1, state, t, t + ns, 0), 0, 0.1);
            t += ns;
        }
        column.Stack(24);
        Assert.Equal((runningPx, runnablePx, blockedPx), column.Heights);
    }

    [GeneratedRegex("<g class=\"mix\" data-segments=\"(\\d+)\">")]
    private static partial Regex ColumnPattern();
}
