using TraceLab.Analyzers;
using TraceLab.Analyzers.WaitGraph;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.EventScript;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// The wait-for graph's per-event shortcuts (the per-CPU "wait known closed" cache, the open-addressing edge table)
/// against hand-computed answers on traces built to defeat them.
/// </summary>
public sealed class WaitGraphShortcutTests
{
    private const int A = 100, B = 200;
    private const long S = TaskState.Interruptible, R = TaskState.Running;

    private static WaitForGraph Analyze(IEnumerable<KernelEvent> events)
    {
        var accounting = new ThreadAccounting();
        var analyzer = new WaitForGraphAnalyzer(accounting.Region, accounting.Slots);
        var pass = new AnalysisPass(accounting, analyzer);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        return analyzer.Result;
    }

    [Fact]
    public void A_thread_that_blocks_on_another_cpu_and_reappears_unannounced_on_the_first_ends_its_wait_there()
    {
        // A logs a syscall on cpu0 (its wait is known closed there), moves to cpu1 without a logged switch-out on
        // cpu0, blocks on cpu1 at 3000 and next shows up on cpu0 at 5000 with no wakeup or switch logged: its wait
        // is 3000..5000 on unknown. Were cpu0 still to remember A as not waiting, the wait would run on to the end
        // of the trace (9000) instead.
        var g = Analyze(
        [
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            SyscallBy(1500, 0, A),
            KernelEvent.Switch(2000, 1, 0, 120, R, A, 120),
            SyscallBy(2500, 1, A),
            KernelEvent.Switch(3000, 1, A, 120, S, 0, 120),
            SyscallBy(5000, 0, A),
            KernelEvent.Switch(6000, 0, A, 120, R, B, 120),
            SyscallBy(9000, 0, B),
        ]);

        Assert.Equal([new WaitEdge(A, WaitVertex.Unknown, 2000, 1)], g.Edges);
    }

    [Fact]
    public void A_thread_that_blocks_and_returns_on_the_same_cpu_without_a_wakeup_ends_its_wait_at_its_first_event()
    {
        // A runs on cpu0, blocks at 2000; idle runs; A's next event at 4000 comes without a switch naming it.
        var g = Analyze(
        [
            KernelEvent.Switch(1000, 0, 0, 120, R, A, 120),
            SyscallBy(1500, 0, A),
            KernelEvent.Switch(2000, 0, A, 120, S, 0, 120),
            SyscallBy(4000, 0, A),
            SyscallBy(4500, 0, A),
            SyscallBy(8000, 0, A),
        ]);

        Assert.Equal([new WaitEdge(A, WaitVertex.Unknown, 2000, 1)], g.Edges);
    }

    [Fact]
    public void Many_distinct_edges_each_keep_their_own_weight_and_count()
    {
        // 300 waiters (tids 1000…1299) take turns on cpu0: waiter i runs from 1000·(i+1) and blocks 100 ns later.
        // From 1 000 000 on, waker 5000 + (i mod 150) on cpu1 wakes waiter i at 1 000 000 + 10·i, then every waiter
        // blocks once more and is woken again by the same waker 1000 ns later. 300 distinct edges, far more than the
        // table starts with, each with two waits: (1 000 000 + 10·i − (1000·(i+1) + 100)) + 1000.
        const int n = 300;
        var events = new List<KernelEvent>();
        for (var i = 0; i < n; i++)
        {
            long start = 1000L * (i + 1);
            events.Add(KernelEvent.Switch(start, 0, 0, 120, R, 1000 + i, 120));
            events.Add(KernelEvent.Switch(start + 100, 0, 1000 + i, 120, S, 0, 120));
        }
        for (var i = 0; i < n; i++)
            events.Add(KernelEvent.Waking(1_000_000 + (10L * i), 1, 5000 + (i % 150), 1000 + i, 0));
        const long second = 2_000_000;
        for (var i = 0; i < n; i++)
        {
            long t = second + (10_000L * i);
            events.Add(KernelEvent.Switch(t, 0, 0, 120, R, 1000 + i, 120));
            events.Add(KernelEvent.Switch(t + 100, 0, 1000 + i, 120, S, 0, 120));
            events.Add(KernelEvent.Waking(t + 1100, 1, 5000 + (i % 150), 1000 + i, 0));
        }
        events.Add(KernelEvent.Switch(second + (10_000L * n), 0, 0, 120, R, 0, 120));

        var g = Analyze(events);

        Assert.Equal(n, g.Edges.Count);
        for (var i = 0; i < n; i++)
        {
            var first = 1_000_000 + (10L * i) - ((1000L * (i + 1)) + 100);
            Assert.Equal(new WaitEdge(1000 + i, 5000 + (i % 150), first + 1000, 2), g.Edge(1000 + i, 5000 + (i % 150)));
        }
    }
}
