using System.Globalization;
using System.Text.RegularExpressions;

namespace TraceLab.IntegrationTests;

/// <summary>
/// Per-thread figures that perf itself computes from a perf.data file, parsed from its text output:
/// `perf sched timehist -s` (run time, sched-in count), `perf sched latency -p` (max scheduling delay) and
/// `perf script` (the exit slice perf sched timehist leaves out, see <see cref="ExitSliceNs"/>).
/// </summary>
public sealed partial class PerfSchedOracle
{
    /// <summary>The bar: per-thread figures agree with perf's within 0.5 %.</summary>
    public const double Tolerance = 0.005;

    /// <summary>
    /// Adds a failure when <paramref name="ours"/> and perf's differ by more than the bar (or the slack).
    /// </summary>
    public static void Check(List<string> failures, string what, long ours, long theirs, long slackNs)
    {
        if (Math.Abs(ours - theirs) > Math.Max(slackNs, Tolerance * Math.Abs(theirs)))
            failures.Add($"{what}: TraceLab {ours:N0}, perf {theirs:N0}");
    }

    public sealed record TimehistRow(long RunNs, long SchedIns);

    public sealed record LatencyRow(long Switches, long MaxDelayNs);

    public Dictionary<int, TimehistRow> Timehist { get; } = new();
    public Dictionary<int, LatencyRow> Latency { get; } = new();
    /// <summary>
    /// Run time of the last slice of each thread that exited: from the previous sched_switch on its CPU to its own
    /// sched_switch with prev_state=X. perf processes PERF_RECORD_EXIT before that switch and no longer knows the
    /// thread, so `perf sched timehist` counts neither the slice nor the switch for it.
    /// </summary>
    public Dictionary<int, long> ExitSliceNs { get; } = new();

    public static PerfSchedOracle From(string perfData)
    {
        var o = new PerfSchedOracle();
        foreach (var line in ProcessOutput.Lines("perf", "sched", "-i", perfData, "timehist", "-s"))
        {
            // " timemutex[15932/15927] 15927 14093 182.004 0.004 ..." (comm[tid/pid] or comm[pid])
            var m = TimehistLine().Match(line);
            if (!m.Success) continue;
            var tid = int.Parse(m.Groups["tid"].Value, CultureInfo.InvariantCulture);
            var row = new TimehistRow(
                Ms(m.Groups["run"].Value), long.Parse(m.Groups["in"].Value, CultureInfo.InvariantCulture));
            // A thread can be listed twice (running tasks and terminated tasks) if perf saw two thread objects.
            o.Timehist[tid] = o.Timehist.TryGetValue(tid, out var prev)
                ? new TimehistRow(prev.RunNs + row.RunNs, prev.SchedIns + row.SchedIns) : row;
        }

        foreach (var line in ProcessOutput.Lines("perf", "sched", "-i", perfData, "latency", "-p"))
        {
            // "  timemutex:15929       |      0.000 ms |    13366 | avg:   0.031 ms | max:  40.022 ms | ..."
            var m = LatencyLine().Match(line);
            if (!m.Success) continue;
            o.Latency[int.Parse(m.Groups["tid"].Value, CultureInfo.InvariantCulture)] =
                new LatencyRow(
                    long.Parse(m.Groups["sw"].Value, CultureInfo.InvariantCulture), Ms(m.Groups["max"].Value));
        }

        var lastSwitch = new Dictionary<int, long>();
        foreach (var line in ProcessOutput.Lines("perf", "script", "-i", perfData, "-F", "cpu,time,event,trace"))
        {
            // "[000] 7934.779545: sched:sched_switch: prev_comm=timemutex prev_pid=15932 prev_prio=120 prev_state=X ==>
            // ..."
            var m = SwitchLine().Match(line);
            if (!m.Success) continue;
            var cpu = int.Parse(m.Groups["cpu"].Value, CultureInfo.InvariantCulture);
            var t = Seconds(m.Groups["s"].Value, m.Groups["us"].Value);
            if (m.Groups["state"].Value == "X" && lastSwitch.TryGetValue(cpu, out var since))
                o.ExitSliceNs[int.Parse(m.Groups["prev"].Value, CultureInfo.InvariantCulture)] = t - since;
            lastSwitch[cpu] = t;
        }

        return o;
    }

    private static long Ms(string text) => (long)Math.Round(double.Parse(text, CultureInfo.InvariantCulture) * 1e6);

    private static long Seconds(string s, string us) =>
        long.Parse(s, CultureInfo.InvariantCulture) * 1_000_000_000
            + long.Parse(us.PadRight(9, '0'), CultureInfo.InvariantCulture);

    [GeneratedRegex(
        @"^\s*\S.*\[(?<tid>\d+)(/\d+)?\]\s+-?\d+\s+(?<in>\d+)\s+(?<run>\d+\.\d+)\s+\d+\.\d+\s+\d+\.\d+\s+\d+\.\d+")]
    private static partial Regex TimehistLine();

    [GeneratedRegex(
        @"^\s*\S.*:(?<tid>\d+)\s+\|\s+[\d.]+ ms \|\s+(?<sw>\d+) \| avg:\s+[\d.]+ ms \| max:\s+(?<max>[\d.]+) ms")]
    private static partial Regex LatencyLine();

    [GeneratedRegex(@"^\[(?<cpu>\d+)\]\s+(?<s>\d+)\.(?<us>\d+):\s+sched:sched_switch:"
        + @".*prev_pid=(?<prev>\d+) prev_prio=-?\d+ prev_state=(?<state>\S+)")]
    private static partial Regex SwitchLine();
}
