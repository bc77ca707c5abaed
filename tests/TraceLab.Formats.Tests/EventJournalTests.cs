using TraceLab.Core;
using TraceLab.Formats.Journal;
using TraceLab.Formats.Registry;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.Formats.Tests;

/// <summary>
/// The first pass's event journal (docs/performance.md#event-journal): its replay delivers what a second reader of the
/// trace delivers, event for event, with the thread table the analyses read as they run the same at every event; a
/// journal that cannot be kept is given up, never an error, and leaves no file.
/// </summary>
public sealed class EventJournalTests
{
    [Theory]
    [InlineData("perf-timemutex-mutex/capture.perf.data")]
    [InlineData("timemutex-mutex/trace.dat")]
    [InlineData("timemutex-cs/trace.dat")]
    public void A_replay_delivers_what_a_second_reader_of_the_trace_does(string sample) =>
        AssertReplayIsASecondRead(Path.Combine(RepoPaths.SampleTraces, sample));

    /// <summary>
    /// The pipeline's way (docs/performance.md#journal-batches): the events journaled a batch at a time after the
    /// reader delivered them — packed batches kept as packed, whole ones packed by the journal — while the reader's
    /// changes to its thread table are placed by the count of events it had delivered.
    /// </summary>
    [Theory]
    [InlineData("perf-timemutex-mutex/capture.perf.data")]
    [InlineData("timemutex-mutex/trace.dat")]
    public void Events_journaled_in_batches_replay_what_a_second_reader_delivers(string sample) =>
        AssertReplayIsASecondRead(Path.Combine(RepoPaths.SampleTraces, sample), inBatches: true);

    [ExternalTraceTheory("tracecmd/lisa_example_rtapp_v6.dat", "perf/perfparser_parallel_static_gcc.zstd.perf.data",
        "etw/perfview_net452_x64.etl.zip")]
    [InlineData("tracecmd/lisa_example_rtapp_v6.dat")]
    [InlineData("perf/perfparser_parallel_static_gcc.zstd.perf.data")]
    [InlineData("etw/perfview_net452_x64.etl.zip")]
    public void Third_party_events_journaled_in_batches_replay_what_a_second_reader_delivers(string file) =>
        AssertReplayIsASecondRead(ExternalTraces.PathOf(file), inBatches: true);

    /// <summary>
    /// A hand-built reader that renames a thread and moves it to another process between events, every few events,
    /// while the batches reach the journal hundreds of events later: at every event the replay's table is the table
    /// the reader had when it delivered that event.
    /// </summary>
    [Fact]
    public void Table_changes_are_replayed_between_the_events_they_came_between()
    {
        using var reader = new RenamingReader(events: 5_000, changeEvery: 13);
        AssertReplayIsASecondRead(reader, new RenamingReader(events: 5_000, changeEvery: 13), inBatches: true,
            tableEvery: 1);
    }

    /// <summary>
    /// Counted as delivered but not all journaled (the last batch never came): given up, never a replay that lacks
    /// events.
    /// </summary>
    [Fact]
    public void A_journal_that_missed_delivered_events_is_given_up()
    {
        using var reader = Open("timemutex-mutex/trace.dat");
        using var journal = EventJournal.Start(reader, long.MaxValue)!;
        var journaled = 0;
        reader.Read(journal.CountedOnReadingThread(new Forward(e =>
        {
            if (journaled++ < 100) journal.OnEvent(e);
        })));
        journal.Finish();
        Assert.Contains("100 of", journal.GivenUp);
        Assert.Null(journal.Replay());
    }

    /// <summary>A packed batch whose texts do not fit in one of the journal's blocks is kept event by event.</summary>
    [Fact]
    public void A_batch_with_texts_larger_than_a_block_is_journaled_event_by_event()
    {
        using var reader = new RenamingReader(events: 0, changeEvery: 1);
        using var journal = EventJournal.Start(reader, long.MaxValue)!;
        var text = new string('x', 300_000);
        var events = Enumerable.Range(1, 4).Select(i => new KernelEvent
        {
            Kind = KernelEventKind.Other,
            Timestamp = i,
            CurrentTid = 100,
            Text = text + i,
        }).ToArray();
        RecordPacked(journal, events);
        journal.Finish();
        Assert.Null(journal.GivenUp);
        var replayed = new List<KernelEvent>();
        journal.Replay()!.Read(new Forward(replayed.Add));
        Assert.Equal(events.Select(e => (e.Timestamp, e.Text)), replayed.Select(e => (e.Timestamp, e.Text)));
    }

    /// <summary>Files TraceLab did not write: both trace.dat versions, a zstd perf.data, a Windows .etl.</summary>
    [ExternalTraceTheory("tracecmd/lisa_example_rtapp_v6.dat", "tracecmd/hip24_test_guest_v7zlib.dat",
        "perf/perfparser_parallel_static_gcc.zstd.perf.data", "etw/perfview_net452_x64.etl.zip")]
    [InlineData("tracecmd/lisa_example_rtapp_v6.dat")]
    [InlineData("tracecmd/hip24_test_guest_v7zlib.dat")]
    [InlineData("perf/perfparser_parallel_static_gcc.zstd.perf.data")]
    [InlineData("etw/perfview_net452_x64.etl.zip")]
    public void A_replay_of_a_third_party_trace_delivers_what_a_second_reader_does(string file) =>
        AssertReplayIsASecondRead(ExternalTraces.PathOf(file));

    [Fact]
    public void A_journal_over_its_limit_is_given_up_and_replays_nothing()
    {
        using var reader = Open("perf-timemutex-mutex/capture.perf.data");
        using var journal = EventJournal.Start(reader, maxBytes: 64 * 1024)!;
        reader.Read(journal);
        journal.Finish();
        Assert.Contains("limit", journal.GivenUp);
        Assert.Null(journal.Replay());
        Assert.Null(reader.Threads.Changes);
    }

    /// <summary>A journal never fills a small temporary file system: at most half its free space.</summary>
    [TmpfsFact]
    public void A_journal_takes_at_most_half_the_free_space_of_its_directory()
    {
        using var small = new TmpfsMount("size=512k");
        using var reader = Open("timemutex-mutex/trace.dat");
        using var journal = EventJournal.Start(reader, long.MaxValue, small.Path)!;
        reader.Read(journal);
        journal.Finish();
        Assert.Contains("limit", journal.GivenUp);
        Assert.True(journal.Bytes <= 256 * 1024, $"{journal.Bytes} bytes on a 512 KiB file system");
        Assert.Null(journal.Replay());
    }

    [Fact]
    public void A_journal_that_cannot_be_made_is_none_and_leaves_the_table_alone()
    {
        using var reader = Open("timemutex-mutex/trace.dat");
        var missing = Path.Combine(Path.GetTempPath(), $"tracelab-no-such-dir-{Guid.NewGuid():N}", "deeper");
        Assert.Null(EventJournal.Start(reader, long.MaxValue, missing));
        Assert.Null(reader.Threads.Changes);
    }

    [Fact]
    public void The_journal_leaves_no_file_behind()
    {
        using var dir = new TempDirectory("tracelab-journal");
        using var reader = Open("timemutex-mutex/trace.dat");
        using (var journal = EventJournal.Start(reader, long.MaxValue, dir.Path)!)
        {
            // Unlinked as soon as it is made (Linux): nothing is left if the process is killed.
            if (!OperatingSystem.IsWindows()) Assert.Empty(Directory.GetFileSystemEntries(dir.Path));
            reader.Read(journal);
            journal.Finish();
            Assert.True(journal.Bytes > 0 && journal.Events == reader.Info.EventCount,
                $"{journal.Bytes} bytes, {journal.Events} of {reader.Info.EventCount} events");
        }
        Assert.Empty(Directory.GetFileSystemEntries(dir.Path));
    }

    [Fact]
    public void A_change_to_the_table_from_another_thread_gives_the_journal_up()
    {
        using var reader = Open("timemutex-mutex/trace.dat");
        using var journal = EventJournal.Start(reader, long.MaxValue)!;
        var other = new Thread(() => reader.Threads.SetName(987_654, "elsewhere"));
        other.Start();
        other.Join();
        reader.Read(journal);
        journal.Finish();
        Assert.Contains("another thread", journal.GivenUp);
        Assert.Null(journal.Replay());
    }

    private static IKernelTraceReader Open(string sample) =>
        TraceFormats.All.Open(Path.Combine(RepoPaths.SampleTraces, sample), TraceReadOptions.Default);

    /// <summary>
    /// Reads the trace with a journal, then replays it and reads it again with a new reader: the two deliver the same
    /// events, and at every event the same thread table (current names, processes, and the names each thread had at
    /// that event's time).
    /// </summary>
    private static void AssertReplayIsASecondRead(string path, bool inBatches = false)
    {
        using var first = TraceFormats.All.Open(path, TraceReadOptions.Default);
        using var second = TraceFormats.All.Open(path, TraceReadOptions.Default);
        AssertReplayIsASecondRead(first, second, inBatches);
    }

    private static void AssertReplayIsASecondRead(IKernelTraceReader first, IKernelTraceReader second,
        bool inBatches, int tableEvery = 97)
    {
        List<string> firstRead;
        using var journal = EventJournal.Start(first, long.MaxValue);
        Assert.NotNull(journal);
        var recorder = new ReadRecorder(first.Threads, tableEvery);
        if (inBatches)
        {
            // Batches of 500 reach the journal after their last event was delivered, packed and whole by turns, as
            // the hand-off to the analysis threads holds them.
            var pending = new List<KernelEvent>();
            var batches = 0;
            void Record()
            {
                if (batches++ % 2 == 0) journal.Whole(pending.ToArray());
                else RecordPacked(journal, pending);
                pending.Clear();
            }
            first.Read(journal.CountedOnReadingThread(new Forward(e =>
            {
                recorder.OnEvent(e);
                pending.Add(e);
                if (pending.Count == 500) Record();
            })));
            Record();
        }
        else first.Read(new TeeSink(journal, recorder));
        journal.Finish();
        Assert.Null(journal.GivenUp);
        firstRead = recorder.Lines;

        var fromTrace = new ReadRecorder(second.Threads, tableEvery);
        second.Read(fromTrace);

        using var replay = journal.Replay()!;
        Assert.Equal(first.Info.MayHaveMarkers, replay.Info.MayHaveMarkers);
        var fromJournal = new ReadRecorder(replay.Threads, tableEvery);
        replay.Read(fromJournal);

        Assert.True(fromTrace.Events > 0, first.Info.TraceFile);
        Assert.Equal(fromTrace.Events, journal.Events);
        Assert.Equal(firstRead, fromTrace.Lines);
        Assert.Equal(fromTrace.Lines, fromJournal.Lines);
        Assert.Equal(fromTrace.Table(), fromJournal.Table());
    }

    /// <summary>
    /// Events of thread 100 on CPU 0, 1 µs apart; before every <c>changeEvery</c>-th event the thread gets a new name
    /// (current and in the history at that time) and a new process.
    /// </summary>
    private sealed class RenamingReader(int events, int changeEvery) : IKernelTraceReader
    {
        public TraceInfo Info { get; } = new() { Backend = "test", TraceFile = "hand-built renaming reader" };

        public ThreadTable Threads { get; } = new();

        public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
        {
            for (var i = 0; i < events; i++)
            {
                var at = 1_000L * (i + 1);
                if (i % changeEvery == 0)
                {
                    Threads.SetName(100, $"worker-{i}");
                    Threads.AddNameChange(100, $"worker-{i}", at);
                    Threads.SetProcess(100, 1_000 + i);
                }
                var e = new KernelEvent { Kind = KernelEventKind.Other, Timestamp = at, Cpu = 0, CurrentTid = 100 };
                sink.OnEvent(e);
            }
        }

        public void Dispose()
        {
        }
    }

    /// <summary>Gives <paramref name="journal"/> the events as one batch packed for the hand-off.</summary>
    private static void RecordPacked(EventJournal journal, IReadOnlyList<KernelEvent> events)
    {
        var bytes = new byte[events.Count * KernelEventPacking.MaxBytes];
        var texts = new string?[events.Count];
        int length = 0, textCount = 0;
        foreach (var e in events) length += KernelEventPacking.Pack(e, bytes, length, texts, ref textCount);
        journal.Packed(bytes.AsSpan(0, length), events.Count, texts.AsSpan(0, textCount));
    }

    private sealed class Forward(Action<KernelEvent> to) : IKernelEventSink
    {
        public void OnEvent(in KernelEvent e) => to(e);
    }

    /// <summary>
    /// Each event in full (every storage field, packed, and its text), and, every 97th event, the thread table as
    /// the analyses would read it then.
    /// </summary>
    private sealed class ReadRecorder(ThreadTable threads, int tableEvery) : IKernelEventSink
    {
        private readonly byte[] _packed = new byte[KernelEventPacking.MaxBytes];
        private readonly string?[] _texts = new string?[1];

        public List<string> Lines { get; } = [];

        public long Events { get; private set; }

        public void OnEvent(in KernelEvent e)
        {
            var count = 0;
            var length = KernelEventPacking.Pack(e, _packed, 0, _texts, ref count);
            Lines.Add($"{Convert.ToHexString(_packed, 0, length)} {_texts[0]}");
            _texts[0] = null;
            if (Events++ % tableEvery == 0) Lines.Add(Table(e.Timestamp));
        }

        public string Table(long? at = null)
        {
            var names = threads.Names.OrderBy(n => n.Key).Select(n =>
                $"{n.Key}={n.Value}" + (at is { } t && threads.TryGetNameAt(n.Key, t, out var then) ? $"@{then}" : ""));
            var processes = threads.Processes.OrderBy(p => p.Key).Select(p => $"{p.Key}:{p.Value}");
            return string.Join(",", names) + " | " + string.Join(",", processes);
        }
    }
}
