using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// What the analysis pass keeps per thread (a trace of 100,000 threads must not take gigabytes). The
/// threads have the shape of `tracelab bench --generate-threads` (ManyThreadsTraceDat): forked and woken by their
/// process's leader, run, block, woken from idle, run, exit. Counted in bytes allocated on the test's thread (the
/// pass runs there), which does not depend on timing or on the garbage collector.
/// </summary>
public sealed class PerThreadMemoryTests
{
    private const int Leaders = 10;
    private const int FirstLeader = 1000;
    private const int Cpu = 0;

    /// <summary>
    /// Bytes per thread all analyses may allocate (garbage of grown arrays included). Measured 2,976 when this test
    /// was written, 2,984 before the waits analysis (the same in every run since the session selects the registered
    /// analyses), 3,539 with it (its per-thread state and figures, and the wait graph's syscall family per thread
    /// before one array held the figures); 5,714 before histograms counted their first values in fields, findings kept
    /// only the buckets a thread used, wait histories grew as needed and tables indexed by tid only when read
    /// (docs/performance.md#many-threads).
    /// </summary>
    private const int MaxBytesPerThread = 3_700;

    [Fact]
    public void All_analyses_allocate_a_bounded_number_of_bytes_per_short_lived_thread()
    {
        // The difference between two sizes cancels what a session allocates once, whatever the thread count.
        var few = Allocations.FewestBytesPerRound(() => Pass(2_000), rounds: 3);
        var many = Allocations.FewestBytesPerRound(() => Pass(6_000), rounds: 3);
        var perThread = (many - few) / 4_000.0;
        Assert.True(perThread <= MaxBytesPerThread, $"{perThread:F0} bytes per thread (at most {MaxBytesPerThread})");
    }

    /// <summary>One pass of all analyses over <paramref name="threads"/> threads, completed.</summary>
    private static void Pass(int threads)
    {
        // Every analysis of the built-in catalog: the same set whatever else this process has made or loaded.
        using var session = new AnalysisSession(AnalysisSelection.All);
        var t = 1_000_000_000L;
        for (var i = 0; i < threads; i++, t += 40_000)
        {
            // ManyThreadsTraceDat's ten events of one thread (on one CPU here); structs, nothing allocated.
            var leader = FirstLeader + i % Leaders;
            var tid = FirstLeader + Leaders + i;
            session.OnEvent(KernelEvent.Waking(t, Cpu, 0, leader, Cpu));
            session.OnEvent(KernelEvent.Switch(t + 500, Cpu, 0, 120, 0, leader, 120));
            session.OnEvent(KernelEvent.Fork(t + 1_000, Cpu, leader, tid));
            session.OnEvent(KernelEvent.WakeupNew(t + 1_500, Cpu, leader, tid, Cpu));
            session.OnEvent(KernelEvent.Switch(t + 2_000, Cpu, leader, 120, 1, tid, 120));
            session.OnEvent(KernelEvent.Switch(t + 12_000, Cpu, tid, 120, 1, 0, 120));
            session.OnEvent(KernelEvent.Waking(t + 22_000, Cpu, 0, tid, Cpu));
            session.OnEvent(KernelEvent.Switch(t + 22_500, Cpu, 0, 120, 0, tid, 120));
            session.OnEvent(KernelEvent.Exit(t + 32_000, Cpu, tid));
            session.OnEvent(KernelEvent.Switch(t + 32_500, Cpu, tid, 120, 0x10, 0, 120));
        }
        session.Complete();
    }
}
