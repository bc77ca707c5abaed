using TraceLab.Analyzers.Wakeups;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>Futile and spurious wakeups and wakeup latency by CPU placement, on hand-built traces.</summary>
public sealed class WakeupAnalyzerTests
{
    private const int A = 21, B = 22;

    [Fact]
    public void Woken_thread_that_blocks_again_at_once_without_progress_is_a_futile_wakeup()
    {
        // B waits; A wakes it at 100 (cpu0) and blocks at 110; B runs 110-120 (10 ns of CPU), enters FUTEX_WAIT again
        // and blocks: futile. Latency 10 ns, same CPU.
        var w = Run(a => new WakeupAnalyzer(a),
            KernelEvent.Switch(0, 0, 0, 120, R, B, 120),
            KernelEvent.Switch(10, 0, B, 120, S, A, 120),
            KernelEvent.Waking(100, 0, A, B, 0),
            KernelEvent.Switch(110, 0, A, 120, S, B, 120),
            Futex(115, B, 0x10, FutexWait),
            KernelEvent.Switch(120, 0, B, 120, S, 0, 120));
        var b = w.Threads[B];
        Assert.Equal((1, 1, 0), (b.Wakeups, b.Futile, b.Spurious));
        Assert.Equal(1, b.SameCpuLatency.Count);
        Assert.Equal(10, b.SameCpuLatency.Max);
        Assert.Equal(0, b.CrossCpuLatency.Count);
    }

    [Theory]
    [InlineData("release")]    // it released a lock (FUTEX_WAKE): progress
    [InlineData("wake")]       // it woke another thread: progress
    [InlineData("cpu")]        // it ran 60 µs: more than the futile threshold
    public void Wakeup_followed_by_progress_is_not_futile(string progress)
    {
        var blockAt = progress == "cpu" ? 110 + 60_000 : 150;
        var events = new List<KernelEvent>
        {
            KernelEvent.Switch(0, 0, 0, 120, R, B, 120),
            KernelEvent.Switch(10, 0, B, 120, S, A, 120),
            KernelEvent.Waking(100, 0, A, B, 0),
            KernelEvent.Switch(110, 0, A, 120, S, B, 120),
        };
        if (progress == "release") events.Add(Futex(120, B, 0x10, FutexWake));
        if (progress == "wake") events.Add(KernelEvent.Waking(120, 0, B, A, 0));
        events.Add(KernelEvent.Switch(blockAt, 0, B, 120, S, 0, 120));
        var b = Run(a => new WakeupAnalyzer(a), [.. events]).Threads[B];
        Assert.Equal((1, 0), (b.Wakeups, b.Futile));
    }

    [Fact]
    public void Waking_a_running_thread_is_spurious_and_a_wakeup_run_elsewhere_is_cross_cpu()
    {
        var w = Run(a => new WakeupAnalyzer(a),
            KernelEvent.Switch(0, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(0, 1, 0, 120, R, B, 120),
            KernelEvent.Waking(50, 0, A, B, 1),                    // B is running on cpu1: spurious
            KernelEvent.Switch(60, 1, B, 120, S, 0, 120),
            KernelEvent.Waking(100, 0, A, B, 1),                   // logged on cpu0, B runs on cpu1 at 130
            KernelEvent.Switch(130, 1, 0, 120, R, B, 120));
        var b = w.Threads[B];
        Assert.Equal(1, b.Spurious);
        Assert.Equal(1, b.CrossCpuLatency.Count);
        Assert.Equal(30, b.CrossCpuLatency.Max);
        Assert.Equal(0, b.SameCpuLatency.Count);
    }
}
