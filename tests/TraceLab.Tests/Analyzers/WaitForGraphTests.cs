using TraceLab.Analyzers;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Analyzers;

/// <summary>Hand-built traces with known wait-for graphs (docs/metrics.md#wait-for-graph).</summary>
public sealed class WaitForGraphTests
{
    private const int A = 100, B = 200, C = 300, D = 400;
    private const long S = TaskState.Interruptible, R = TaskState.Running;
    private const int Irq = WaitVertex.KernelIrq;

    private sealed record Run(WaitForGraph Graph, ThreadAccounting Accounting);

    private static Run Analyze(params KernelEvent[] events) => Analyze(null, events);

    private static Run Analyze(WaitForGraphOptions? options, params KernelEvent[] events)
    {
        var accounting = new ThreadAccounting();
        var analyzer = new WaitForGraphAnalyzer(accounting.Region, options);
        var pass = new AnalysisPass(accounting, analyzer);
        var last = long.MinValue;
        foreach (var e in events)
        {
            if (e.Timestamp < last) throw new InvalidOperationException($"test script out of order at {e}");
            last = e.Timestamp;
            pass.OnEvent(e);
        }
        pass.Complete();
        return new Run(analyzer.Result, accounting);
    }

    private static long W(WaitForGraph g, int from, int to) => g.Edge(from, to).WeightNs;

    [Fact]
    public void A_wait_goes_to_the_thread_that_ended_it()
    {
        // One CPU: A blocks at 2000, B wakes it at 5000 → A→B = 3000, one wait.
        var run = Analyze(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(2000, 0, A, 120, S, B, 120),
            KernelEvent.Waking(5000, 0, B, A, 0),
            KernelEvent.Switch(6000, 0, B, 120, R, A, 120));
        var g = run.Graph;

        Assert.Equal([new WaitEdge(A, B, 3000, 1)], g.Edges);
        Assert.Equal(3000, g.WaitNs[A]);
        Assert.Equal(run.Accounting.Threads[A].WaitNs, g.WaitNs[A]);
        Assert.False(g.WaitNs.ContainsKey(B));                 // preempted at 6000: runnable, not waiting
        Assert.Equal(3000, g.WaitedOnNs[B]);
        Assert.Equal(3000, g.TotalWaitNs);
        Assert.Equal([new WaitedOnShare(B, 3000, 1.0)], g.TopWaitedOn([A], 3));
        Assert.Empty(g.Knots);
    }

    /// <summary>
    /// cpu0 A, cpu1 B, cpu2 C. A blocks 2000..10000 (woken by B); B blocks 4000..7000 (woken by C); C never waits.
    /// </summary>
    private static readonly KernelEvent[] Chain =
    [
        KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
        KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
        KernelEvent.Switch(1000, 2, 0, 120, R, C, 120),
        KernelEvent.Switch(2000, 0, A, 120, S, 0, 120),
        KernelEvent.Switch(4000, 1, B, 120, S, 0, 120),
        KernelEvent.Waking(7000, 2, C, B, 1),
        KernelEvent.Switch(7500, 1, 0, 120, R, B, 120),
        KernelEvent.Waking(10000, 1, B, A, 0),
        KernelEvent.Switch(10500, 0, 0, 120, R, A, 120),
    ];

    [Fact]
    public void Part_of_a_wait_during_which_the_waker_itself_waited_cascades_to_the_wakers_waker()
    {
        var g = Analyze(Chain).Graph;

        // A waits 8000 (2000..10000). B was blocked 4000..7000 inside it, ended by C: those 3000 go to C.
        Assert.Equal(8000 - 3000, W(g, A, B));
        Assert.Equal(3000, W(g, A, C));
        Assert.Equal(3000, W(g, B, C));                         // B's own wait, C never waited
        Assert.Equal(3, g.Edges.Count);
        Assert.All(g.Edges, e => Assert.Equal(1, e.Count));     // one wait behind each edge
        Assert.Equal(8000, g.WaitNs[A]);                        // cascading moves weight, never creates it
        Assert.Equal(3000 + 3000, g.WaitedOnNs[C]);

        // A alone: B explains 5000/8000, C 3000/8000. A and B together: C 6000/11000, B 5000/11000.
        Assert.Equal([new WaitedOnShare(B, 5000, 5000 / 8000.0), new WaitedOnShare(C, 3000, 3000 / 8000.0)],
            g.TopWaitedOn([A], 5));
        Assert.Equal([new WaitedOnShare(C, 6000, 6000 / 11000.0)], g.TopWaitedOn([A, B], 1));
    }

    [Fact]
    public void Without_cascading_the_whole_wait_stays_on_the_direct_waker()
    {
        var g = Analyze(new WaitForGraphOptions { MaxCascadeDepth = 0 }, Chain).Graph;
        Assert.Equal(8000, W(g, A, B));
        Assert.Equal(0, W(g, A, C));
    }

    /// <summary>
    /// Four CPUs. A blocks 2000..7000 (woken by B), B 3000..6000 (woken by C), C 4000..5000 (woken by D).
    /// A's 5000: 2000 B ran, 3000 B waited; of those, 1000 C waited on D and 2000 C did not.
    /// </summary>
    [Theory]
    [InlineData(8, 2000, 2000, 1000)]
    [InlineData(1, 2000, 3000, 0)]      // one hop: A's time stops at C even though C was waiting on D
    public void Cascading_recurses_up_to_the_depth_limit(int depth, long aOnB, long aOnC, long aOnD)
    {
        var g = Analyze(new WaitForGraphOptions { MaxCascadeDepth = depth },
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(1000, 2, 0, 120, R, C, 120),
            KernelEvent.Switch(1000, 3, 0, 120, R, D, 120),
            KernelEvent.Switch(2000, 0, A, 120, S, 0, 120),
            KernelEvent.Switch(3000, 1, B, 120, S, 0, 120),
            KernelEvent.Switch(4000, 2, C, 120, S, 0, 120),
            KernelEvent.Waking(5000, 3, D, C, 2),
            KernelEvent.Switch(5100, 2, 0, 120, R, C, 120),
            KernelEvent.Waking(6000, 2, C, B, 1),
            KernelEvent.Switch(6100, 1, 0, 120, R, B, 120),
            KernelEvent.Waking(7000, 1, B, A, 0),
            KernelEvent.Switch(7100, 0, 0, 120, R, A, 120)).Graph;

        Assert.Equal(aOnB, W(g, A, B));
        Assert.Equal(aOnC, W(g, A, C));
        Assert.Equal(aOnD, W(g, A, D));
        Assert.Equal(5000, g.WaitNs[A]);
        Assert.Equal(2000, W(g, B, C));     // B's 3000: 1000 of it C waited on D (one hop, within both limits)
        Assert.Equal(1000, W(g, B, D));
        Assert.Equal(1000, W(g, C, D));
    }

    /// <summary>
    /// A blocks 1000..10000 (woken by B). Meanwhile B waits three times on C: 2000..3000, 4000..5000, 6000..7000.
    /// With room for two waits, B's first one is gone by 10000: its 1000 stays on A→B and the lookup is counted.
    /// </summary>
    [Theory]
    [InlineData(32, 6000, 3000, 0)]
    [InlineData(2, 7000, 2000, 1)]
    public void History_overflow_keeps_the_lost_part_on_the_direct_edge(
        int capacity, long aOnB, long aOnC, long truncated)
    {
        var g = Analyze(new WaitForGraphOptions { HistoryCapacity = capacity },
            KernelEvent.Switch(500, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(500, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(500, 2, 0, 120, R, C, 120),
            KernelEvent.Switch(1000, 0, A, 120, S, 0, 120),
            KernelEvent.Switch(2000, 1, B, 120, S, 0, 120),
            KernelEvent.Waking(3000, 2, C, B, 1),
            KernelEvent.Switch(3100, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(4000, 1, B, 120, S, 0, 120),
            KernelEvent.Waking(5000, 2, C, B, 1),
            KernelEvent.Switch(5100, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(6000, 1, B, 120, S, 0, 120),
            KernelEvent.Waking(7000, 2, C, B, 1),
            KernelEvent.Switch(7100, 1, 0, 120, R, B, 120),
            KernelEvent.Waking(10000, 1, B, A, 0),
            KernelEvent.Switch(10100, 0, 0, 120, R, A, 120)).Graph;

        Assert.Equal(aOnB, W(g, A, B));
        Assert.Equal(aOnC, W(g, A, C));
        Assert.Equal(9000, g.WaitNs[A]);
        Assert.Equal(3000, W(g, B, C));
        Assert.Equal(truncated, g.TruncatedCascades);
    }

    /// <summary>
    /// A lock handed round A → B → C → A on three CPUs. Step j (j = 0..29) starts at T = 10000 + 1000·j with holder
    /// H_j = (A, B, C)[j mod 3] switching in; at T+800 it wakes H_{j+1}; at T+900 it blocks. B blocks at 9000 and C at
    /// 9500 before the first step. D (cpu3), outside the lock, waits once on A and once on a hard interrupt.
    /// </summary>
    private static List<KernelEvent> LockPingPong(int steps, bool withD)
    {
        int[] holders = [A, B, C];
        var events = new List<KernelEvent>
        {
            KernelEvent.Switch(8000, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(8000, 2, 0, 120, R, C, 120),
            KernelEvent.Switch(9000, 1, B, 120, S, 0, 120),
            KernelEvent.Switch(9500, 2, C, 120, S, 0, 120),
        };
        for (var j = 0; j < steps; j++)
        {
            var t = 10000 + 1000L * j;
            var holder = holders[j % 3];
            var next = holders[(j + 1) % 3];
            events.Add(KernelEvent.Switch(t, j % 3, 0, 120, R, holder, 120));
            events.Add(KernelEvent.Waking(t + 800, j % 3, holder, next, (j + 1) % 3));
            events.Add(KernelEvent.Switch(t + 900, j % 3, holder, 120, S, 0, 120));
        }
        if (withD)
        {
            events.Add(KernelEvent.Switch(8000, 3, 0, 120, R, D, 120));
            events.Add(KernelEvent.Switch(8500, 3, D, 120, S, 0, 120));
            events.Add(KernelEvent.Waking(10500, 0, A, D, 3));                     // A holds the lock 10000..10900
            events.Add(KernelEvent.Switch(10600, 3, 0, 120, R, D, 120));
            events.Add(KernelEvent.Switch(10700, 3, D, 120, S, 0, 120));
            events.Add(KernelEvent.Waking(20050, 3, 0, D, 3).WithFlags(EventFlags.HardIrq));
            events.Add(KernelEvent.Switch(20150, 3, 0, 120, R, D, 120));
        }
        return [.. events.OrderBy(e => e.Timestamp)];   // stable: same-time events keep their listed order
    }

    [Fact]
    public void Lock_ping_pong_among_three_threads_is_one_knot()
    {
        var g = Analyze([.. LockPingPong(30, withD: true)]).Graph;

        // Steady state (wakeup at step j ≥ 2): H_{j+1} waits T_{j-2}+900 .. T_j+800 = 1900, ended by H_j. H_j itself
        // was blocked until T_{j-1}+800 (woken by H_{j-1}), so T_{j-2}+900 .. T_{j-1}+800 = 900 cascade to H_{j-1},
        // who was not waiting then. Each wait gives 1000 to its waker and 900 to the third thread.
        // Wakeups j = 2..29 wake A 10×(by C), B 9×(by A), C 9×(by B). First waits: B 9000..10800 by A (A has no
        // history yet: 1800 to A); C 9500..11800 by B, B blocked until 10800 → 1300 to A, 1000 to B.
        // End (last event 39900): B blocked since T_28+900 = 38900 → 1000 to unknown; C blocked since 39900 → 0.
        Assert.Equal(new WaitEdge(A, C, 10 * 1000, 10), g.Edge(A, C));
        Assert.Equal(new WaitEdge(A, B, 10 * 900, 10), g.Edge(A, B));
        Assert.Equal(new WaitEdge(B, A, 9 * 1000 + 1800, 10), g.Edge(B, A));
        Assert.Equal(new WaitEdge(B, C, 9 * 900, 9), g.Edge(B, C));
        Assert.Equal(new WaitEdge(C, B, 9 * 1000 + 1000, 10), g.Edge(C, B));
        Assert.Equal(new WaitEdge(C, A, 9 * 900 + 1300, 10), g.Edge(C, A));
        Assert.Equal(1000, W(g, B, WaitVertex.Unknown));
        // D: 8500..10500 on A (A had not waited yet), 10700..20050 on the interrupt.
        Assert.Equal(2000, W(g, D, A));
        Assert.Equal(9350, W(g, D, Irq));

        const long lockWeight = 10000 + 9000 + 10800 + 8100 + 10000 + 9400;   // 57,300
        Assert.Equal(lockWeight + 1000 + 2000 + 9350, g.TotalWaitNs);
        // Threshold 1% of 69,650 → 697: every edge above counts; D reaches the knot but nothing in it waits on D.
        Assert.Equal(697, g.KnotMinEdgeWeightNs);
        var knot = Assert.Single(g.Knots);
        Assert.Equal([A, B, C], knot.Vertices);
        Assert.Equal(lockWeight, knot.InternalWeightNs);
        Assert.True(knot.IsSink);                              // only B→unknown leaves it

        // The lock's threads wait on A 20,200, on B 19,000, on C 18,100, on unknown 1000 (of 58,300).
        var top = g.TopWaitedOn([A, B, C], 2);
        Assert.Equal([new WaitedOnShare(A, 20200, 20200 / 58300.0), new WaitedOnShare(B, 19000, 19000 / 58300.0)], top);
    }

    /// <summary>
    /// A and B wait on each other 100 ns each; C waits 100,000 ns on a soft interrupt. 1 % of 100,200 = 1002.
    /// </summary>
    [Theory]
    [InlineData(0.01, false)]
    [InlineData(0.0, true)]
    public void Edges_below_the_threshold_do_not_make_knots(double share, bool knot)
    {
        var g = Analyze(new WaitForGraphOptions { KnotMinEdgeShare = share },
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(1000, 2, 0, 120, R, C, 120),
            KernelEvent.Switch(1100, 2, C, 120, S, 0, 120),
            KernelEvent.Switch(2000, 0, A, 120, S, 0, 120),
            KernelEvent.Waking(2100, 1, B, A, 0),
            KernelEvent.Switch(2200, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(3000, 1, B, 120, S, 0, 120),
            KernelEvent.Waking(3100, 0, A, B, 1),
            KernelEvent.Switch(3200, 1, 0, 120, R, B, 120),
            KernelEvent.Waking(101100, 2, 0, C, 2).WithFlags(EventFlags.SoftIrq),
            KernelEvent.Switch(101200, 2, 0, 120, R, C, 120)).Graph;

        Assert.Equal(100, W(g, A, B));
        Assert.Equal(100, W(g, B, A));
        Assert.Equal(100000, W(g, C, Irq));
        if (knot)
        {
            var k = Assert.Single(g.Knots);
            Assert.Equal([A, B], k.Vertices);
            Assert.Equal(200, k.InternalWeightNs);
        }
        else
        {
            Assert.Equal(1002, g.KnotMinEdgeWeightNs);
            Assert.Empty(g.Knots);
        }
    }

    [Theory]
    [InlineData(EventFlags.HardIrq)]
    [InlineData(EventFlags.SoftIrq)]
    [InlineData(EventFlags.Nmi)]
    public void Wakeups_from_interrupt_context_or_idle_go_to_kernel_irq(byte flags)
    {
        // A blocks 2000..5000, woken in interrupt context on cpu1 while B runs there (common_pid B is only the
        // interrupted thread). C blocks 2000..4000, woken by the idle task. D blocks 3000..7000, woken by A, who was
        // waiting on the interrupt 3000..5000: that part cascades to kernel/irq.
        var run = Analyze(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(1000, 2, 0, 120, R, C, 120),
            KernelEvent.Switch(1000, 3, 0, 120, R, D, 120),
            KernelEvent.Switch(2000, 0, A, 120, S, 0, 120),
            KernelEvent.Switch(2000, 2, C, 120, S, 0, 120),
            KernelEvent.Switch(3000, 3, D, 120, S, 0, 120),
            KernelEvent.Waking(4000, 0, 0, C, 2),
            KernelEvent.Switch(4100, 2, 0, 120, R, C, 120),
            KernelEvent.Waking(5000, 1, B, A, 0).WithFlags(flags),
            KernelEvent.Switch(5500, 0, 0, 120, R, A, 120),
            KernelEvent.Waking(7000, 0, A, D, 3),
            KernelEvent.Switch(7100, 3, 0, 120, R, D, 120));
        var g = run.Graph;

        Assert.Equal(3000, W(g, A, Irq));
        Assert.Equal(0, W(g, A, B));
        Assert.Equal(2000, W(g, C, Irq));
        Assert.Equal(2000, W(g, D, Irq));
        Assert.Equal(2000, W(g, D, A));
        Assert.Equal(3000 + 2000 + 2000, g.WaitedOnNs[Irq]);
        Assert.False(g.WaitedOnNs.ContainsKey(B));
        Assert.Equal("kernel/irq", WaitVertex.Name(Irq));
    }

    [Fact]
    public void A_timed_sleep_reported_by_the_backend_goes_to_the_timer()
    {
        // ETW-style: A's switch-out says DelayExecution (4); the DPC that readies it is logged on the thread it
        // interrupted (B). C's switch-out says UserRequest (6): an ordinary wait, B's wakeup counts.
        var g = Analyze(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(1000, 2, 0, 120, R, C, 120),
            KernelEvent.Switch(2000, 0, A, 120, S, 0, 120, prevWaitReason: 4),
            KernelEvent.Switch(2000, 2, C, 120, S, 0, 120, prevWaitReason: 6),
            KernelEvent.Waking(5000, 1, B, A, 0),
            KernelEvent.Waking(6000, 1, B, C, 2)).Graph;

        Assert.Equal(3000, W(g, A, WaitVertex.Timer));
        Assert.Equal(0, W(g, A, B));
        Assert.Equal(4000, W(g, C, B));
    }

    [Fact]
    public void Waits_without_a_logged_wakeup_go_to_unknown()
    {
        // A blocks 2000, switched in at 4000 with no wakeup. C blocks 2500 and next shows up running (a syscall)
        // at 4500: its switch-in was lost too. B blocks at 3000 and is still blocked at the last event, 6000.
        var run = Analyze(
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(1000, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(1000, 2, 0, 120, R, C, 120),
            KernelEvent.Switch(2000, 0, A, 120, S, 0, 120),
            KernelEvent.Switch(2500, 2, C, 120, S, 0, 120),
            KernelEvent.Switch(3000, 1, B, 120, S, 0, 120),
            KernelEvent.Switch(4000, 0, 0, 120, R, A, 120),
            SyscallBy(4500, 2, C),
            KernelEvent.Switch(6000, 0, A, 120, R, 0, 120));
        var g = run.Graph;

        Assert.Equal(2000, W(g, A, WaitVertex.Unknown));
        Assert.Equal(2000, W(g, C, WaitVertex.Unknown));
        Assert.Equal(3000, W(g, B, WaitVertex.Unknown));
        Assert.Equal(run.Accounting.Threads[A].WaitNs, g.WaitNs[A]);
        Assert.Equal(run.Accounting.Threads[B].WaitNs, g.WaitNs[B]);
    }

    [Fact]
    public void Weights_are_clipped_to_the_region_and_earlier_ones_dropped_but_histories_kept()
    {
        // Region [4000, 9000] (markers by C on cpu2).
        // Before: A 500..1500 on B (1000, dropped at BEGIN). Across BEGIN: B 2000..5000 on C, A 3000..6000 on B.
        // A's in-region part 4000..6000 overlaps B's wait (from B's history, recorded across BEGIN) 4000..5000:
        // A→C 1000, A→B 1000; B→C 1000. Across END: A 8000..11000 on B → 1000 more on A→B. After END: nothing.
        var run = Analyze(
            KernelEvent.Switch(100, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(100, 1, 0, 120, R, B, 120),
            KernelEvent.Switch(100, 2, 0, 120, R, C, 120),
            KernelEvent.Switch(500, 0, A, 120, S, 0, 120),
            KernelEvent.Waking(1500, 1, B, A, 0),
            KernelEvent.Switch(1600, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(2000, 1, B, 120, S, 0, 120),
            KernelEvent.Switch(3000, 0, A, 120, S, 0, 120),
            KernelEvent.Marker(4000, 2, C, MeasuredRegion.BeginMarker),
            KernelEvent.Waking(5000, 2, C, B, 1),
            KernelEvent.Switch(5100, 1, 0, 120, R, B, 120),
            KernelEvent.Waking(6000, 1, B, A, 0),
            KernelEvent.Switch(6100, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(8000, 0, A, 120, S, 0, 120),
            KernelEvent.Marker(9000, 2, C, MeasuredRegion.EndMarker),
            KernelEvent.Waking(11000, 1, B, A, 0),
            KernelEvent.Switch(11100, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(12000, 0, A, 120, S, 0, 120),
            KernelEvent.Waking(13000, 1, B, A, 0),
            KernelEvent.Switch(13100, 0, 0, 120, R, A, 120));
        var g = run.Graph;

        Assert.Equal(new WaitEdge(A, B, 2000, 2), g.Edge(A, B));
        Assert.Equal(new WaitEdge(A, C, 1000, 1), g.Edge(A, C));
        Assert.Equal(new WaitEdge(B, C, 1000, 1), g.Edge(B, C));
        Assert.Equal(3, g.Edges.Count);
        Assert.Equal(run.Accounting.Threads[A].WaitNs, g.WaitNs[A]);   // 2000 + 1000
        Assert.Equal(run.Accounting.Threads[B].WaitNs, g.WaitNs[B]);   // 1000
    }

    [Fact]
    public void Steady_state_allocates_nothing_per_event()
    {
        var events = LockPingPong(3000, withD: false);
        var analyzer = new WaitForGraphAnalyzer(new MeasuredRegion());
        var warmUp = events.Count / 10;
        for (var i = 0; i < warmUp; i++) analyzer.OnEvent(events[i]);

        // Fewest bytes over five slices: a one-off runtime allocation on this thread (tier-up) lands in one slice,
        // a per-event allocation in all of them.
        var slice = (events.Count - warmUp) / 5;
        var fewest = long.MaxValue;
        for (var start = warmUp; start + slice <= events.Count; start += slice)
        {
            var before = GC.GetAllocatedBytesForCurrentThread();
            for (var i = start; i < start + slice; i++) analyzer.OnEvent(events[i]);
            fewest = Math.Min(fewest, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        for (var i = warmUp + (5 * slice); i < events.Count; i++) analyzer.OnEvent(events[i]);
        Assert.Equal(0, fewest);
        analyzer.Complete(events[^1].Timestamp);
        Assert.Equal(3, analyzer.Result.Knots[0].Vertices.Count);
    }
}
