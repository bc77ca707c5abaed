using TraceLab.Cli.Live;
using TraceLab.Core;

namespace TraceLab.Tests.Capture;

/// <summary>The --live numbers against a hand-built script whose per-second answer is worked out below.</summary>
public sealed class LiveThreadRatesTests
{
    private const long Ms = 1_000_000;

    // Process 100 has threads 101 and 102; 200 belongs to process 199. One CPU.
    //   0 ms    forks
    //   100 ms  idle → 101                          101 runs 100..700
    //   500 ms  101 wakes 102                       102 ready 500..700
    //   700 ms  101 blocks → 102                    101: 1 switch, run 600 ms, credited in [0 s, 1 s)
    //   1200 ms 102 preempted → 200                 102: 1 switch, run 500 ms, credited at 1.2 s → [1 s, 2 s)
    //   2100 ms 200 blocks → idle                   (another process)
    //   3050 ms any event                           closes [2 s, 3 s): nothing of process 100
    private static KernelEvent[] Script() =>
    [
        KernelEvent.Fork(0, 0, 100, 101),
        KernelEvent.Fork(0, 0, 100, 102),
        KernelEvent.Fork(0, 0, 199, 200),
        KernelEvent.Switch(100 * Ms, 0, 0, 120, TaskState.Running, 101, 120),
        KernelEvent.Waking(500 * Ms, 0, 101, 102, 0),
        KernelEvent.Switch(700 * Ms, 0, 101, 120, TaskState.Interruptible, 102, 120),
        KernelEvent.Switch(1200 * Ms, 0, 102, 120, TaskState.Running, 200, 120),
        KernelEvent.Switch(2100 * Ms, 0, 200, 120, TaskState.Interruptible, 0, 120),
        KernelEvent.Switch(3050 * Ms, 0, 0, 120, TaskState.Running, 0, 120),
    ];

    private static List<LiveInterval> Run(int follow)
    {
        var intervals = new List<LiveInterval>();
        var rates = new LiveThreadRates(intervals.Add);
        rates.Follow(follow);
        foreach (var e in Script()) rates.OnEvent(e);
        return intervals;
    }

    [Fact]
    public void Each_second_shows_what_the_followed_process_threads_did_in_it()
    {
        var intervals = Run(follow: 100);

        Assert.Equal(3, intervals.Count);
        Assert.Equal((0L, 1000 * Ms), (intervals[0].BeginNs, intervals[0].EndNs));
        Assert.All(intervals, i => Assert.Equal(0L, i.OriginNs));
        Assert.Equal(
            [new LiveThreadRow(101, 1, 0, 600 * Ms), new LiveThreadRow(102, 0, 200 * Ms, 0)],
            intervals[0].Threads);
        Assert.Equal([new LiveThreadRow(102, 1, 0, 500 * Ms)], intervals[1].Threads);
        Assert.Empty(intervals[2].Threads);
    }

    [Fact]
    public void Without_a_process_every_active_thread_is_shown()
    {
        var intervals = Run(follow: 0);
        Assert.Equal([new LiveThreadRow(200, 1, 0, 900 * Ms)], intervals[2].Threads);
    }

    [Fact]
    public void A_line_per_second_in_rates()
    {
        var line =
            LiveView.Format(new LiveInterval(1000 * Ms, 2000 * Ms, [new LiveThreadRow(102, 1500, 250 * Ms, 500 * Ms)]));
        Assert.Equal("live 2.0 s | 102: 1,500 sw/s ready 250.0 ms/s run 500.0 ms/s", line);
    }
}
