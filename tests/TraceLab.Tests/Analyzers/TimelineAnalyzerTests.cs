using TraceLab.Analyzers;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Timeline;
using TraceLab.Cli;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>The thread timeline against hand-computed intervals (docs/metrics.md#timeline).</summary>
public sealed class TimelineAnalyzerTests(ITestOutputHelper output)
{
    private const int A = 101, B = 102;
    private const long R = TaskState.Running, S = TaskState.Interruptible;

    /// <summary>
    /// One CPU, region begins at 100 (marker by A).
    /// 100 idle → A · 200 A blocks → B · 300 B wakes A · 400 B preempted → A · 500 A blocks → B · 600 B blocks → idle.
    /// Window 50:350 → [150, 500].
    /// </summary>
    private static KernelEvent[] PingPong() =>
    [
        KernelEvent.Switch(50, 0, 0, 120, R, A, 120),
        KernelEvent.Marker(100, 0, A, MeasuredRegion.BeginMarker),
        KernelEvent.Switch(200, 0, A, 120, S, B, 120),
        KernelEvent.Waking(300, 0, B, A, 0),
        KernelEvent.Switch(400, 0, B, 120, R, A, 120),
        KernelEvent.Switch(500, 0, A, 120, S, B, 120),
        KernelEvent.Switch(600, 0, B, 120, S, 0, 120),
    ];

    private static TimelineData Record(TimelineWindow window, params KernelEvent[] events)
    {
        var accounting = new ThreadAccounting();
        var timeline = new TimelineAnalyzer(accounting, window);
        var pass = new AnalysisPass(accounting, timeline);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        return timeline.Result();
    }

    [Fact]
    public void Segments_are_the_hand_computed_states_clipped_to_the_window()
    {
        var d = Record(new TimelineWindow(50, 350), PingPong());
        Assert.Equal((100L, 150L, 500L), (d.Anchor, d.Start, d.End));
        Assert.Equal(
        [
            new TimelineSegment(A, ThreadRunState.Running, 150, 200, 0),
            new TimelineSegment(A, ThreadRunState.Blocked, 200, 300, -1),
            new TimelineSegment(B, ThreadRunState.Running, 200, 400, 0),
            new TimelineSegment(A, ThreadRunState.Runnable, 300, 400, -1),
            new TimelineSegment(A, ThreadRunState.Running, 400, 500, 0),
            new TimelineSegment(B, ThreadRunState.Runnable, 400, 500, -1),
        ], d.Segments.OrderBy(s => s.Start).ThenBy(s => s.Tid == A ? 0 : 1).ThenBy(s => s.End));
        Assert.Equal([new TimelineWake(300, B, A, 0)], d.Wakes);
        var a = TimelineSummary.For(d, A);
        Assert.Equal((150L, 100L, 100L, 4, 1), (a.RunningNs, a.RunnableNs, a.BlockedNs, a.Segments, a.WakesReceived));
        var b = TimelineSummary.For(d, B);
        Assert.Equal((200L, 100L, 0L, 2, 0), (b.RunningNs, b.RunnableNs, b.BlockedNs, b.Segments, b.WakesReceived));
    }

    [Fact]
    public void Window_is_anchored_at_the_region_begin_and_what_came_before_is_dropped()
    {
        // Before the marker the window is anchored at the first event (50): [50, 90] would hold A's run; the marker
        // at 100 moves it to [100, 140], so only A's run 100..140 remains.
        var d = Record(new TimelineWindow(0, 40), PingPong());
        Assert.Equal([new TimelineSegment(A, ThreadRunState.Running, 100, 140, 0)], d.Segments);
    }

    [Fact]
    public void A_window_past_the_end_records_nothing()
    {
        var d = Record(new TimelineWindow(10_000, 100), PingPong());
        Assert.Empty(d.Segments);
        Assert.Empty(d.Wakes);
    }

    private const int C = 103;
    private const long Sem = 7;

    /// <summary>A System V semaphore passed A → B → C through its wait queue: two handoffs, by 111.</summary>
    private static KernelEvent[] SemaphorePassedAToBToC() =>
    [
            KernelEvent.Switch(10, 0, 0, 120, R, A, 120),
            Semop(20, A, Sem), SemopDone(21, A),                                        // A holds
            KernelEvent.Switch(30, 0, A, 120, R, B, 120), Semop(40, B, Sem),
            KernelEvent.Switch(50, 0, B, 120, S, C, 120), Semop(60, C, Sem),
            KernelEvent.Switch(70, 0, C, 120, S, A, 120),
            Semop(80, A, Sem), KernelEvent.Waking(81, 0, A, B, 0), SemopDone(82, A),    // A → B
            KernelEvent.Switch(90, 0, A, 120, R, B, 120), SemopDone(91, B),
            Semop(100, B, Sem), KernelEvent.Waking(101, 0, B, C, 0), SemopDone(102, B), // B → C
            KernelEvent.Switch(110, 0, B, 120, R, C, 120), SemopDone(111, C),
    ];

    [Fact]
    public void Convoy_items_come_from_the_analyzers_observer_hooks()
    {
        // A System V semaphore passed A → B → C through its wait queue (two handoffs: too short for an episode).
        var accounting = new ThreadAccounting();
        var convoys = new ConvoyAnalyzer(accounting);
        var timeline = new TimelineAnalyzer(accounting, new TimelineWindow(0, 10_000));
        timeline.Observe(convoys, null);
        var pass = new AnalysisPass(accounting, convoys, timeline);
        KernelEvent[] events =
        [
            .. SemaphorePassedAToBToC(),
        ];
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        var d = timeline.Result();
        var o = Assert.Single(convoys.Objects);
        Assert.Equal(o.Handoffs, d.Handoffs.Count);
        Assert.Equal([(A, B, 81L, 90L), (B, C, 101L, 110L)],
            d.Handoffs.Select(h => (h.Giver, h.Receiver, h.WokenAt, h.RunningAt)));
        Assert.Equal(0, o.Episodes);
        Assert.Empty(d.Episodes);
    }

    /// <summary>
    /// Past the window the analyzer closes every open state at once and stops tracking: on real captures (several
    /// windows, one ending inside the region's first events, one reaching past the region) the items are exactly
    /// those of an analyzer that tracks every thread to the end. Segments may be recorded in another order.
    /// </summary>
    [Theory]
    [InlineData("timemutex-mutex/trace.dat", "10:1", true, true)]
    [InlineData("timemutex-mutex/trace.dat", "0:0.05", true, true)]
    [InlineData("timemutex-mutex/trace.dat", "30:100000", true, false)]   // the window outlasts the region
    [InlineData("timemutex-cs/trace.dat", "10:1", true, true)]
    // A perf.data without ftrace's print event cannot hold markers: no region can begin, the window cannot move.
    [InlineData("perf-timemutex-mutex/capture.perf.data", "2:3", false, true)]
    [InlineData("perf-timemutex-mutex/capture.perf.data", "0:0.5", false, true)]
    public void Stopping_after_the_window_records_what_tracking_to_the_end_records(
        string sample, string window, bool markers, bool stops)
    {
        var w = TimelineWindow.Parse(window);
        (TimelineData Data, bool Stopped, bool HasBegin) Record(bool stop)
        {
            using var reader = TraceFiles.Open(Path.Combine(RepoPaths.SampleTraces, sample));
            Assert.Equal(markers, reader.Info.MayHaveMarkers);
            var (pass, timeline, accounting) = ConvoyTimelinePass(w, reader.Info.MayHaveMarkers, stop);
            reader.Read(pass);
            pass.Complete();
            return (timeline.Result(), timeline.StoppedAfterWindow, accounting.Region.HasBegin);
        }

        var (reference, neverStops, hasBegin) = Record(stop: false);
        var (shortcut, stopped, _) = Record(stop: true);
        Assert.Equal(markers, hasBegin);
        Assert.False(neverStops);
        Assert.Equal(stops, stopped);
        Assert.NotEmpty(reference.Segments);
        Assert.Equal(
            (reference.Start, reference.End, reference.Truncated), (shortcut.Start, shortcut.End, shortcut.Truncated));
        Assert.Equal(Sorted(reference.Segments), Sorted(shortcut.Segments));
        Assert.Equal(reference.Wakes, shortcut.Wakes);
        Assert.Equal(reference.Handoffs, shortcut.Handoffs);
        Assert.Equal(reference.Episodes, shortcut.Episodes);
        Assert.Equal(reference.FutileWakeups, shortcut.FutileWakeups);

        static List<TimelineSegment> Sorted(IEnumerable<TimelineSegment> s) =>
            [.. s.OrderBy(x => x.Tid).ThenBy(x => x.Start).ThenBy(x => x.End).ThenBy(x => x.State)];
    }

    /// <summary>
    /// A pass that records only the timeline ends its read once the recording is final
    /// (<see cref="UntilTimelineFinal"/>: past the window, nothing unreported that could begin in it, at most one
    /// settled open episode): at windows all over real captures with convoys (episodes, handoffs, futile wakeups) the
    /// recording is exactly that of a pass that reads to the end — the same items in the same order. Measured: where
    /// the convoy goes on past the window
    /// (these workloads' whole run) its open episode keeps the read going; windows past it end early (11, 9 and 26 of
    /// 36 here); the early end with items in the window is checked on a hand-built trace below.
    /// </summary>
    [Theory]
    [InlineData("timemutex-mutex/trace.dat")]
    [InlineData("timemutex-cs/trace.dat")]
    [InlineData("perf-timemutex-mutex/capture.perf.data")]
    public void A_timeline_pass_that_ends_when_final_records_what_reading_to_the_end_records(string sample)
    {
        var path = Path.Combine(RepoPaths.SampleTraces, sample);
        (TimelineData Data, bool EndedEarly) Record(TimelineWindow w, bool endEarly)
        {
            using var reader = TraceFiles.Open(path);
            var (pass, timeline, _) = ConvoyTimelinePass(w, reader.Info.MayHaveMarkers, endEarly);
            using var final = new CancellationTokenSource();
            try
            {
                reader.Read(endEarly ? new UntilTimelineFinal(pass, timeline, final, checkEvents: 256) : pass,
                    final.Token);
            }
            catch (OperationCanceledException) when (final.IsCancellationRequested)
            {
            }

            pass.Complete();
            return (timeline.Result(), final.IsCancellationRequested);
        }

        int windows = 0, early = 0, withEpisodes = 0, earlyWithItems = 0;
        foreach (var start in new[] { 0.0, 0.5, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89 })
            foreach (var length in new[] { 0.25, 1, 4 })
            {
                var w = new TimelineWindow((long)(start * 1e6), (long)(length * 1e6));
                var (reference, _) = Record(w, endEarly: false);
                var (ended, endedEarly) = Record(w, endEarly: true);
                windows++;
                if (endedEarly) early++;
                if (reference.Episodes.Count > 0) withEpisodes++;
                if (endedEarly && reference.Handoffs.Count + reference.Episodes.Count > 0) earlyWithItems++;
                var at = $"{sample} at {start}:{length}";
                AssertSameRecording(reference, ended, at);
            }

        // The comparison reached the early end, with handoffs or episodes in the window, and windows with episodes
        // (where a convoy goes on past the window, its open episode keeps the read going: no early end there).
        output.WriteLine($"{sample}: {early} of {windows} reads ended early ({earlyWithItems} with handoffs or " +
            $"episodes in the window); {withEpisodes} windows with episodes");
        Assert.True(early > 0, $"{early} of {windows} reads ended early");
        Assert.True(withEpisodes > 0 || sample.Contains("-cs", StringComparison.Ordinal),
            $"{withEpisodes} of {windows} windows with episodes");
    }

    /// <summary>
    /// The focused timeline's second pass as the pipeline runs it (an <see cref="AnalysisSession"/> of the convoys and
    /// wakeups that ends when the recording is final): on the reading thread, and with its analyses on a thread beside
    /// the reader, it records what a pass reading to the end records, and ends early at the same events — the finality
    /// is asked where the timeline runs. It keeps no ready- or wakeup-latency histograms, which no report reads.
    /// </summary>
    [Theory]
    [InlineData("timemutex-mutex/trace.dat")]
    [InlineData("perf-timemutex-mutex/capture.perf.data")]
    public void A_timeline_session_ending_when_final_records_the_same_with_an_analysis_thread(string sample)
    {
        var path = Path.Combine(RepoPaths.SampleTraces, sample);
        (TimelineData Data, bool EndedEarly, long ReadyLatencies) Record(TimelineWindow w, int threads, bool endEarly)
        {
            using var reader = TraceFiles.Open(path);
            using var final = new CancellationTokenSource();
            using var session = new AnalysisSession(AnalysisSelection.Convoys | AnalysisSelection.Wakeups,
                new AnalysisOptions(w, reader.Info.MayHaveMarkers), threads, reader.Threads,
                endWhenTimelineFinal: endEarly ? final : null);
            var read = new CountingSink(session.Sink);
            try
            {
                reader.Read(read, final.Token);
                // On the reading thread the read ends at the check that finds the recording final, not at the reader's
                // next look at its token (a perf.data round, or 65,536 events, later).
                if (final.IsCancellationRequested && threads == 0)
                    Assert.Fail($"the reader went on to the end ({read.Count} events) after the recording was final");
            }
            catch (OperationCanceledException) when (final.IsCancellationRequested)
            {
                if (threads == 0)
                    Assert.True(read.Count % UntilTimelineFinal.CheckEvents == 0,
                        $"{sample} at {w}: the read ended at event {read.Count}, not at a finality check");
            }

            session.Complete();
            return (session.Timeline!.Result(), final.IsCancellationRequested,
                session.Accounting.Threads.Values.Sum(s => s.ReadyLatency.Count)
                + session.Wakeups!.Threads.Values.Sum(s => s.SameCpuLatency.Count + s.CrossCpuLatency.Count));
        }

        var early = 0;
        foreach (var start in new[] { 0.0, 2, 8, 21, 55, 89 })
        {
            var w = new TimelineWindow((long)(start * 1e6), 1_000_000);
            var (reference, _, referenceLatencies) = Record(w, threads: 0, endEarly: false);
            var (onReadingThread, onReadingThreadEndedEarly, latencies) = Record(w, threads: 0, endEarly: true);
            AssertSameRecording(reference, onReadingThread, $"{sample} at {start}:1, on the reading thread");
            // The timeline's pass keeps no ready- or wakeup-latency histograms (nothing reads them), and records the
            // same without.
            Assert.True(referenceLatencies > 0, $"{sample}: the reference pass recorded no ready latency");
            Assert.Equal(0, latencies);
            var (beside, besideEndedEarly, _) = Record(w, threads: 1, endEarly: true);
            var at = $"{sample} at {start}:1, 1 analysis thread";
            // The same checks at the same events, wherever the timeline runs: the same early ends.
            Assert.True(onReadingThreadEndedEarly == besideEndedEarly, at);
            if (besideEndedEarly) early++;
            AssertSameRecording(reference, beside, at);
        }
        // The trace.dat sample's 62,599 events hold few finality checks (one per 16,384 events) and its convoy runs
        // through them all; the perf.data sample ends early.
        output.WriteLine($"{sample}: {early} reads with an analysis thread ended early");
        Assert.True(early > 0 || sample.EndsWith(".dat", StringComparison.Ordinal), "no read ended early");
    }

    /// <summary>
    /// A hand-built trace whose window holds a whole convoy episode (a System V semaphore passed A → B → C → A), then
    /// 3 ms of other threads' switches: once the episode can no longer grow (its hold limit has passed) the pass ends
    /// its read, and records exactly the three handoffs, the episode and the segments a pass reading to the end does.
    /// </summary>
    [Fact]
    public void A_timeline_pass_ends_after_a_settled_episode_with_the_same_recording()
    {
        const int D = 104, E = 105;
        List<KernelEvent> events =
        [
            .. SemaphorePassedAToBToC(),
            KernelEvent.Switch(120, 0, C, 120, R, A, 120), Semop(130, A, Sem),
            KernelEvent.Switch(140, 0, A, 120, S, C, 120),
            Semop(150, C, Sem), KernelEvent.Waking(151, 0, C, A, 0), SemopDone(152, C), // C → A
            KernelEvent.Switch(160, 0, C, 120, R, A, 120), SemopDone(161, A),
        ];
        for (long t = 1_000, i = 0; t < 3_000_000; t += 10_000, i++)
            events.Add(KernelEvent.Switch(t, 1, i % 2 == 0 ? D : E, 120, R, i % 2 == 0 ? E : D, 120));
        var window = new TimelineWindow(0, 300);

        (TimelineData Data, long ReadUpTo) Record(bool endEarly)
        {
            var (pass, timeline, _) = ConvoyTimelinePass(window, markersPossible: false, endEarly);
            using var final = new CancellationTokenSource();
            IKernelEventSink sink = endEarly ? new UntilTimelineFinal(pass, timeline, final, checkEvents: 1) : pass;
            var last = 0L;
            foreach (var e in events)
            {
                if (final.IsCancellationRequested) break; // as a reader at its cancellation check
                sink.OnEvent(e);
                last = e.Timestamp;
            }
            pass.Complete();
            return (timeline.Result(), last);
        }

        var (reference, all) = Record(endEarly: false);
        var (ended, readUpTo) = Record(endEarly: true);
        Assert.Equal(3, reference.Handoffs.Count);
        var episode = Assert.Single(reference.Episodes);
        Assert.Equal((81L, 160L, 3), (episode.Start, episode.End, episode.Handoffs));
        // Read up to the episode's hold limit (1 ms after its end), not to the end of the trace.
        Assert.InRange(readUpTo, 160 + ConvoyAnalyzer.MaxHoldNs, 160 + ConvoyAnalyzer.MaxHoldNs + 10_000);
        Assert.True(readUpTo < all);
        Assert.Equal((reference.Start, reference.End), (ended.Start, ended.End));
        Assert.Equal(reference.Handoffs, ended.Handoffs);
        Assert.Equal(reference.Episodes, ended.Episodes);
        Assert.Equal(reference.Wakes, ended.Wakes);
        Assert.Equal(reference.FutileWakeups, ended.FutileWakeups);
        Assert.Equal(reference.Segments.OrderBy(x => x.Tid).ThenBy(x => x.Start),
            ended.Segments.OrderBy(x => x.Tid).ThenBy(x => x.Start));
    }

    /// <summary>The same items in the same order (segments in any order: they close thread by thread).</summary>
    private static void AssertSameRecording(TimelineData reference, TimelineData ended, string at)
    {
        Assert.True((reference.Start, reference.End, reference.Truncated)
            == (ended.Start, ended.End, ended.Truncated), at);
        Assert.True(reference.Wakes.SequenceEqual(ended.Wakes), at);
        Assert.True(reference.Handoffs.SequenceEqual(ended.Handoffs), at);
        Assert.True(reference.Episodes.SequenceEqual(ended.Episodes), at);
        Assert.True(reference.FutileWakeups.SequenceEqual(ended.FutileWakeups), at);
        Assert.Equal(reference.Segments.OrderBy(x => x.Tid).ThenBy(x => x.Start).ThenBy(x => x.State),
            ended.Segments.OrderBy(x => x.Tid).ThenBy(x => x.Start).ThenBy(x => x.State));
    }

    /// <summary>A pass of the analyses a focused timeline draws from: the accounting, convoys, wakeups, timeline.
    /// </summary>
    private static (AnalysisPass Pass, TimelineAnalyzer Timeline, ThreadAccounting Accounting) ConvoyTimelinePass(
        TimelineWindow window, bool markersPossible, bool stopAfterWindow)
    {
        var accounting = new ThreadAccounting();
        var convoys = new ConvoyAnalyzer(accounting);
        var wakeups = new TraceLab.Analyzers.Wakeups.WakeupAnalyzer(accounting);
        var timeline = new TimelineAnalyzer(accounting, window, markersPossible: markersPossible)
        {
            StopAfterWindow = stopAfterWindow,
        };
        timeline.Observe(convoys, wakeups);
        return (new AnalysisPass(accounting, convoys, wakeups, timeline), timeline, accounting);
    }

    [Fact]
    public void Events_outside_the_window_do_not_allocate()
    {
        var accounting = new ThreadAccounting();
        var timeline = new TimelineAnalyzer(accounting, new TimelineWindow(1_000_000_000, 1));
        var t = 1000L;
        var events = new KernelEvent[200];
        void Round()
        {
            for (var i = 0; i < events.Length; i += 2)
            {
                events[i] = KernelEvent.Switch(t++, 0, A, 120, S, B, 120);
                events[i + 1] = KernelEvent.Waking(t++, 0, B, A, 0);
            }
            foreach (var e in events) timeline.OnEvent(e);
        }
        Round(); // the two threads become known
        Assert.Equal(0, Allocations.FewestBytesPerRound(Round));
    }

    [Theory]
    [InlineData("10:4", 10_000_000L, 4_000_000L)]
    [InlineData("0.5:0.25", 500_000L, 250_000L)]
    public void Window_parses_ms(string text, long start, long length) =>
        Assert.Equal(new TimelineWindow(start, length), TimelineWindow.Parse(text));

    [Theory]
    [InlineData("10")]
    [InlineData("a:b")]
    [InlineData("-1:4")]
    [InlineData("1:0")]
    public void Bad_window_is_refused(string text) => Assert.Throws<FormatException>(() => TimelineWindow.Parse(text));
}
