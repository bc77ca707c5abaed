using TraceLab.Analyzers;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// The kernel, convoy, wakeup and SMP analyses allocate nothing per event once their threads and objects are known.
/// </summary>
public sealed class AnalyzerAllocationTests
{
    [Fact]
    public void Steady_state_lock_convoy_allocates_nothing()
    {
        var session =
            new AnalysisSession(AnalysisSelection.Threads | AnalysisSelection.Kernel | AnalysisSelection.Convoys
            | AnalysisSelection.Wakeups | AnalysisSelection.Smp);
        var script = ConvoyAnalyzerTests.SemaphoreConvoy();
        var events = new KernelEvent[script.Length];
        var offset = 0L;
        void Round()
        {
            // The convoy again, 1 µs later each round: handoffs, episodes, syscalls, switches and wakeups over the
            // same three threads and semaphore. The round starts by switching from C (running at the end) to A.
            for (var i = 0; i < script.Length; i++)
            {
                events[i] = script[i];
                events[i].Timestamp += offset;
            }
            events[0] = KernelEvent.Switch(offset + 90, 0, ConvoyAnalyzerTests.C, 120, R, ConvoyAnalyzerTests.A, 120);
            offset += 1000;
            foreach (var e in events) session.OnEvent(e);
        }
        Round(); // threads, object, histogram rows and dictionary entries come into being
        Round();
        Assert.Equal(0, Allocations.FewestBytesPerRound(Round));
        Assert.True(session.Convoys!.Objects.Single().Handoffs > 10);
    }
}
