using TraceLab.Analyzers;
using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Locks;
using TraceLab.Cli;
using TraceLab.Core;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// The pass's one <see cref="LockOperationTracker"/>: each thread's lock operation through its phases and its
/// release, the transitions its subscribers see, one tracker per pass shared by the lock analyses of that pass.
/// </summary>
public sealed class LockOperationTrackerTests
{
    private const int A = 101, B = 102;
    private const long Lock = 0x5000;

    /// <summary>Writes down each transition with the operation as the subscriber sees it then.</summary>
    private sealed class Recorder : ILockOperationObserver
    {
        public List<string> Seen { get; } = [];

        private void Add(string what, ThreadLockOperation op, long t) => Seen.Add(
            $"{t} {what} {op.Tid} {op.Kind} {op.Phase} released-by {op.Releaser} at {op.ReleasedAt} " +
            $"running {(op.RanSinceRelease ? op.RunningAt : -1)}");

        public void OnEntered(ThreadLockOperation op, in KernelEvent e) => Add("entered", op, e.Timestamp);
        public void OnBlocked(ThreadLockOperation op, in KernelEvent e) => Add("blocked", op, e.Timestamp);
        public void OnExiting(ThreadLockOperation op, in KernelEvent e) => Add("exiting", op, e.Timestamp);
        public void OnInferredAcquired(ThreadLockOperation op, in KernelEvent e) => Add("acquired", op, e.Timestamp);
    }

    private static (ThreadAccounting Accounting, LockOperationTracker Tracker, Recorder Seen) Run(
        params KernelEvent[] events)
    {
        var accounting = new ThreadAccounting();
        var tracker = LockOperationTracker.Of(accounting);
        var recorder = new Recorder();
        tracker.Subscribe(recorder, LockTransitions.Entered | LockTransitions.Blocked | LockTransitions.Exiting
            | LockTransitions.InferredAcquired);
        // No analyzer at all: the pass feeds the accounting's stages by themselves.
        var pass = new AnalysisPass(accounting);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        return (accounting, tracker, recorder);
    }

    /// <summary>
    /// A waits on a futex (blocks at 30); B's wake op on the same futex wakes it at 45 (a release); A runs at 60 and
    /// returns at 70. B's own operation, entered while on its CPU, never blocks.
    /// </summary>
    [Fact]
    public void A_futex_wait_goes_through_entered_blocked_woken_running_and_its_release()
    {
        var (accounting, tracker, seen) = Run(
            KernelEvent.Switch(10, 0, 0, 120, R, A, 120),
            Futex(20, A, Lock, FutexWait),
            KernelEvent.Switch(30, 0, A, 120, S, B, 120),
            Futex(40, B, Lock, FutexWake), KernelEvent.Waking(45, 0, B, A, 0), FutexDone(50, B, 1),
            KernelEvent.Switch(60, 0, B, 120, S, A, 120),
            FutexDone(70, A));
        Assert.Equal(
        [
            "20 entered 101 Wait Entered released-by 0 at 0 running -1",
            "30 blocked 101 Wait Blocked released-by 0 at 0 running -1",
            "40 entered 102 Wake Entered released-by 0 at 0 running -1",
            "50 exiting 102 Wake Entered released-by 0 at 0 running -1",
            "70 exiting 101 Wait Running released-by 102 at 45 running 60",
        ], seen.Seen);
        // After the exit: out of the operation, the release cleared, how far it got kept.
        var a = tracker.Find(accounting.Slots.SlotOf(A)) ?? throw new InvalidOperationException("no operation for A");
        Assert.Equal((A, LockOpKind.None, LockPhase.Running, false), (a.Tid, a.Kind, a.Phase, a.IsReleased));
        Assert.True(tracker.SawLockSyscalls);
    }

    /// <summary>
    /// A release that finds the waiter still on its CPU (woken before it switched out) has it running from the
    /// release; the waiter never blocks, so its phase stays Entered.
    /// </summary>
    [Fact]
    public void A_release_before_the_switch_out_has_the_waiter_running_from_the_release()
    {
        var (_, _, seen) = Run(
            KernelEvent.Switch(10, 0, 0, 120, R, A, 120),
            KernelEvent.Switch(11, 1, 0, 120, R, B, 120),
            Futex(20, A, Lock, FutexWait) with { Cpu = 0 },
            Futex(21, B, Lock, FutexWake) with { Cpu = 1 },
            KernelEvent.Waking(25, 1, B, A, 0),
            FutexDone(30, A) with { Cpu = 0 });
        Assert.Equal("30 exiting 101 Wait Entered released-by 102 at 25 running 25", seen.Seen[^1]);
    }

    /// <summary>
    /// No lock syscalls (ETW without SystemCall events): B's voluntary wait for a lock-type reason, ended by A of
    /// the same process, is an inferred operation, acquired when B runs.
    /// </summary>
    [Fact]
    public void An_inferred_wait_is_acquired_when_the_woken_thread_runs()
    {
        const int P = 100, UserRequest = 6;
        var (_, tracker, seen) = Run(
            KernelEvent.Fork(1, 0, P, A), KernelEvent.Fork(2, 0, P, B),
            KernelEvent.Switch(10, 0, 0, 120, R, B, 120),
            KernelEvent.Switch(20, 0, B, 120, S, A, 120, UserRequest),
            KernelEvent.Waking(30, 0, A, B, 0),
            KernelEvent.Switch(40, 0, A, 120, S, B, 120, UserRequest));
        Assert.Equal("40 acquired 102 None None released-by 101 at 30 running 40", Assert.Single(seen.Seen));
        Assert.False(tracker.SawLockSyscalls);
    }

    [Fact]
    public void The_lock_analyses_of_a_pass_share_its_tracker_and_every_pass_has_its_own()
    {
        var accounting = new ThreadAccounting();
        var tracker = LockOperationTracker.Of(accounting);
        _ = new ConvoyAnalyzer(accounting);
        _ = new FindingEvidenceAnalyzer(accounting);
        Assert.Same(tracker, LockOperationTracker.Of(accounting));
        Assert.Same(tracker, Assert.Single(accounting.Stages.All));
        Assert.NotSame(tracker, LockOperationTracker.Of(new ThreadAccounting()));
    }

    /// <summary>
    /// With two analysis threads, convoys and findings run in two passes, each with its own accounting and tracker:
    /// both give what they give in one pass on the reading thread.
    /// </summary>
    [Theory]
    [InlineData("timemutex-mutex/trace.dat")]
    [InlineData("perf-timemutex-mutex/capture.perf.data")]
    public void Convoys_and_findings_in_separate_passes_give_what_they_give_in_one(string sample)
    {
        var kinds = AnalysisSelection.Convoys | Analyses.Catalog.Of(FindingEvidenceAnalyzer.Analysis);
        (string Text, long Handoffs, long BlockedNs) Analyze(int threads)
        {
            using var session = new AnalysisSession(kinds, analysisThreads: threads);
            Assert.Equal(threads, session.AnalysisThreads);
            using (var reader = TraceFiles.Open(Path.Combine(RepoPaths.SampleTraces, sample)))
                reader.Read(session.Sink);
            session.Complete();
            var convoys = session.Convoys ?? throw new InvalidOperationException("no convoy analyzer");
            var findings = (FindingEvidenceAnalyzer?)session.AnalyzerOf(FindingEvidenceAnalyzer.Analysis)
                ?? throw new InvalidOperationException("no findings analyzer");
            var objects = convoys.Objects.OrderBy(o => o.Object.ToString(), StringComparer.Ordinal)
                .Select(o => $"{o.Object} {o.Handoffs} {o.BlockingWaits} {o.LostRaces} {o.Episodes} {o.ConvoyNs}");
            var evidence = findings.Result();
            return (string.Join('\n', objects) + "\n" + AnalysisPassDispatchTests.Dump(evidence),
                convoys.Objects.Sum(o => o.Handoffs), evidence.Objects.Values.Sum(o => o.BlockedNs.Values.Sum()));
        }

        var onePass = Analyze(0);
        Assert.Equal(onePass.Text, Analyze(2).Text);
        // Not vacuous: both analyses followed lock operations (handoffs; time blocked in them).
        Assert.True(onePass.Handoffs > 0 && onePass.BlockedNs > 0, $"{onePass.Handoffs} {onePass.BlockedNs}");
    }
}
