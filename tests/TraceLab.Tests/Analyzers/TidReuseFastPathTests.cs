using TraceLab.Analyzers;
using TraceLab.Core;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// One analysis pass rewrites reused tids itself and lets a syscall of the thread its CPU runs skip the map while that
/// tid still stands for it (<see cref="AnalysisPass"/>); passes on analysis threads get events the session rewrote.
/// Both must see the same threads, including when a tid is retired on another CPU than the one still believed to run
/// it.
/// </summary>
public sealed class TidReuseFastPathTests
{
    private const int X = 100, Y = 200, Futex = 202;

    /// <summary>
    /// X exits and leaves its CPU; a new thread with X's tid runs on the other CPU. Y exits on CPU 0 and, before its
    /// dead switch-out, a fork creates Y's tid again (a new thread); that thread's syscall is logged on CPU 0, whose
    /// switch to it was lost, where the first Y was still the running thread: it belongs to the new Y.
    /// </summary>
    private static IEnumerable<KernelEvent> Events()
    {
        yield return KernelEvent.Switch(10, 0, 0, 120, 0, X, 120);
        yield return KernelEvent.SyscallEnter(11, 0, X, Futex);
        yield return KernelEvent.SyscallExit(12, 0, X, Futex, 0);
        yield return KernelEvent.Exit(13, 0, X);
        yield return KernelEvent.Switch(14, 0, X, 120, TaskState.ExitDead, Y, 120);
        yield return KernelEvent.Switch(15, 1, 0, 120, 0, X, 120);
        yield return KernelEvent.SyscallEnter(16, 1, X, Futex);
        yield return KernelEvent.SyscallExit(17, 1, X, Futex, 0);
        yield return KernelEvent.SyscallEnter(18, 0, Y, Futex);
        yield return KernelEvent.SyscallExit(19, 0, Y, Futex, 0);
        yield return KernelEvent.Exit(20, 0, Y);
        yield return KernelEvent.Fork(21, 1, X, Y);
        yield return KernelEvent.SyscallEnter(22, 0, Y, Futex);
        yield return KernelEvent.SyscallExit(23, 0, Y, Futex, 0);
    }

    /// <param name="viaSink">
    /// Feed <see cref="AnalysisSession.Sink"/> (what the CLI's readers get) rather than the session.
    /// </param>
    private static AnalysisSession Analyze(int analysisThreads, bool viaSink = false)
    {
        var session = new AnalysisSession(AnalysisSelection.All, analysisThreads: analysisThreads);
        var sink = viaSink ? session.Sink : session;
        foreach (var e in Events()) sink.OnEvent(e);
        session.Complete();
        return session;
    }

    [Theory]
    [InlineData(0, false)]
    [InlineData(0, true)]
    [InlineData(1, false)]
    [InlineData(1, true)]
    public void A_reused_tid_is_a_new_thread_whoever_rewrites_it(int analysisThreads, bool viaSink)
    {
        var session = Analyze(analysisThreads, viaSink);
        var kernel = session.Kernel!.Threads;
        // Each of the four threads made one syscall: the second Y's on CPU 0, where the first Y was still thought to
        // run.
        foreach (var id in new[] { X, ThreadIds.Of(X, 2), Y, ThreadIds.Of(Y, 2) })
            Assert.True(kernel.TryGetValue(id, out var t) && t.BySyscall[Futex].Calls == 1, $"thread {id}");
        Assert.Equal([X, Y], session.Instances.ReusedTids.Order());
    }

    /// <summary>
    /// A session's recorder (the first pass's event journal) gets, on the reading thread, every event as the analyses
    /// see it — reused tids rewritten; a session given those events as they are (a replay) finds the same threads
    /// and the same times.
    /// </summary>
    [Fact]
    public void A_recorder_sees_the_rewritten_events_and_their_replay_needs_no_rewriting()
    {
        var recorded = new Recorder();
        var first = new AnalysisSession(AnalysisSelection.All, analysisThreads: 1, recorder: recorded);
        foreach (var e in Events()) first.Sink.OnEvent(e);
        first.Complete();
        Assert.Equal(Events().Count(), recorded.Events.Count);
        Assert.Equal(Environment.CurrentManagedThreadId, recorded.Thread);
        Assert.Contains(recorded.Events, e => e.CurrentTid == ThreadIds.Of(Y, 2));

        var replay = new AnalysisSession(AnalysisSelection.All, eventsHaveThreadIds: true);
        foreach (var e in recorded.Events) replay.Sink.OnEvent(e);
        replay.Complete();
        AssertSameThreads(first, replay);
    }

    [Fact]
    public void A_recorder_needs_an_analysis_thread() =>
        Assert.Throws<ArgumentException>(() =>
            new AnalysisSession(AnalysisSelection.All, analysisThreads: 0, recorder: new Recorder()));

    private sealed class Recorder : IEventBatchRecorder
    {
        public List<KernelEvent> Events { get; } = [];

        public int Thread { get; private set; }

        public void Packed(ReadOnlySpan<byte> bytes, int count, ReadOnlySpan<string?> texts)
        {
            Thread = Environment.CurrentManagedThreadId;
            var (packed, textArray, e) = (bytes.ToArray(), texts.ToArray(), default(KernelEvent));
            for (int n = 0, at = 0; n < count; n++)
            {
                at += KernelEventPacking.Unpack(packed, at, textArray, ref e);
                Events.Add(e);
            }
        }

        public void Whole(ReadOnlySpan<KernelEvent> events)
        {
            Thread = Environment.CurrentManagedThreadId;
            Events.AddRange(events);
        }
    }

    [Fact]
    public void One_pass_and_a_pass_per_thread_give_the_same_threads()
    {
        AssertSameThreads(Analyze(0), Analyze(1));
    }

    /// <summary>The same threads, each with the same run, wait and ready time.</summary>
    private static void AssertSameThreads(AnalysisSession expected, AnalysisSession actual)
    {
        Assert.Equal(expected.Kernel!.Threads.Keys.Order(), actual.Kernel!.Threads.Keys.Order());
        foreach (var id in expected.Kernel.Threads.Keys)
        {
            var a = expected.Accounting.Stats(id);
            var b = actual.Accounting.Stats(id);
            Assert.Equal((a.RunNs, a.WaitNs, a.ReadyNs), (b.RunNs, b.WaitNs, b.ReadyNs));
        }
    }

    [Fact]
    public void The_sink_is_the_pass_itself_on_the_readers_thread_and_the_session_with_analysis_threads()
    {
        using var single = new AnalysisSession(AnalysisSelection.All, analysisThreads: 0);
        using var threaded = new AnalysisSession(AnalysisSelection.All, analysisThreads: 1);
        Assert.IsType<AnalysisPass>(single.Sink);
        Assert.Same(threaded, threaded.Sink);
    }
}
