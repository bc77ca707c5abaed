using TraceLab.Analyzers.Parallel;
using TraceLab.Core;

namespace TraceLab.Tests.Analyzers.Parallel;

public sealed class EventFanOutTests
{
    /// <summary>Records what it was given, and on which thread.</summary>
    private sealed class Recorder(int failAt = -1) : IKernelEventSink
    {
        public readonly List<long> Timestamps = [];
        public readonly HashSet<int> Threads = [];

        public void OnEvent(in KernelEvent e)
        {
            if (Timestamps.Count == failAt) throw new InvalidDataException($"consumer failed at event {failAt}");
            Timestamps.Add(e.Timestamp);
            Threads.Add(Environment.CurrentManagedThreadId);
        }
    }

    private static KernelEvent At(long ts) =>
        KernelEvent.Waking(ts, cpu: (int)(ts % 3), waker: 1, woken: (int)ts, targetCpu: 0);

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(EventFanOut.BatchSize)]
    [InlineData(EventFanOut.BatchSize * EventFanOut.PoolSize * 3 + 17)]
    public void Every_consumer_sees_every_event_in_order_on_its_own_thread(int count)
    {
        var consumers = new[] { new Recorder(), new Recorder(), new Recorder() };
        using (var fanOut = new EventFanOut(consumers))
        {
            for (var i = 0; i < count; i++) fanOut.OnEvent(At(i));
            fanOut.Finish();
        }

        var expected = Enumerable.Range(0, count).Select(i => (long)i).ToList();
        foreach (var c in consumers)
        {
            Assert.Equal(expected, c.Timestamps);
            Assert.DoesNotContain(Environment.CurrentManagedThreadId, c.Threads);
        }

        if (count > 0)
            Assert.Equal(3, consumers.SelectMany(c => c.Threads).Distinct().Count());
    }

    [Fact]
    public void A_consumers_error_reaches_the_producer_with_its_type_and_the_others_still_stop()
    {
        var healthy = new Recorder();
        var failing = new Recorder(failAt: 5000);
        var fanOut = new EventFanOut([healthy, failing]);
        var ex = Assert.Throws<InvalidDataException>(() =>
        {
            // The producer learns of the failure at a later hand-off, or at Finish at the latest.
            for (var i = 0; i < 200_000; i++) fanOut.OnEvent(At(i));
            fanOut.Finish();
        });
        Assert.Contains("consumer failed at event 5000", ex.Message);
        fanOut.Dispose();
        Assert.Equal(5000, failing.Timestamps.Count);
    }

    [Fact]
    public void Dispose_without_finish_stops_the_consumer_threads()
    {
        var c = new Recorder();
        var fanOut = new EventFanOut([c]);
        for (var i = 0; i < EventFanOut.BatchSize * 2 + 3; i++) fanOut.OnEvent(At(i));
        fanOut.Dispose(); // a reader error or cancellation: must not hang
        Assert.Throws<InvalidOperationException>(fanOut.Finish);
    }

    /// <summary>Keeps every event it is given, whole.</summary>
    private sealed class EventRecorder : IKernelEventSink
    {
        public readonly List<KernelEvent> Events = [];

        public void OnEvent(in KernelEvent e) => Events.Add(e);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    [InlineData(null)]
    public void Packed_and_whole_batches_deliver_the_same_events(bool? packing)
    {
        var events = new List<KernelEvent>();
        for (var i = 0; i < EventFanOut.BatchSize * 5 + 3; i++)
        {
            events.Add((i % 4) switch
            {
                0 => KernelEvent.Switch(
                    i, i % 2, prevTid: 100 + i % 5, prevPrio: 120, prevState: i % 3, nextTid: 0, nextPrio: 120),
                1 => new KernelEvent
                {
                    Timestamp = i,
                    Cpu = 1,
                    CurrentTid = 7,
                    Kind = KernelEventKind.SyscallEnter,
                    SyscallNr = 202,
                    Arg0 = -i,
                    Arg1 = 128,
                    Arg3 = long.MaxValue
                },
                2 => KernelEvent.Marker(i, 0, 7, $"marker {i}"),
                _ => new KernelEvent
                {
                    Timestamp = i,
                    Cpu = 1,
                    CurrentTid = 7,
                    Kind = KernelEventKind.SyscallExit,
                    SyscallNr = 202,
                    Ret = -11,
                    Flags = 3
                },
            });
        }

        var consumers = new[] { new EventRecorder(), new EventRecorder() };
        var batches = new BatchRecorder();
        long packed;
        using (var fanOut = new EventFanOut(consumers, packing, batches))
        {
            foreach (var e in events) fanOut.OnEvent(e);
            fanOut.Finish();
            packed = fanOut.PackedBatches;
        }

        foreach (var c in consumers) Assert.Equal(events, c.Events);
        if (packing == true) Assert.Equal(7, packed); // six batches of events and the end marker
        if (packing == false) Assert.Equal(0, packed);
        // The recorder (the event journal) got every event in order, a batch at a time as handed over (not the end
        // marker), on the caller's thread.
        Assert.Equal(events, batches.Events);
        Assert.Equal(6, batches.Packed + batches.Whole);
        if (packing is { } p) Assert.Equal(p ? 6 : 0, batches.Packed);
        Assert.Equal([Environment.CurrentManagedThreadId], batches.Threads);
    }

    private sealed class BatchRecorder : IEventBatchRecorder
    {
        public readonly List<KernelEvent> Events = [];
        public readonly HashSet<int> Threads = [];
        public int Packed, Whole;

        void IEventBatchRecorder.Packed(ReadOnlySpan<byte> bytes, int count, ReadOnlySpan<string?> texts)
        {
            Packed++;
            Threads.Add(Environment.CurrentManagedThreadId);
            var (packedBytes, textArray, e) = (bytes.ToArray(), texts.ToArray(), default(KernelEvent));
            for (int n = 0, at = 0; n < count; n++)
            {
                at += KernelEventPacking.Unpack(packedBytes, at, textArray, ref e);
                Events.Add(e);
            }
        }

        void IEventBatchRecorder.Whole(ReadOnlySpan<KernelEvent> events)
        {
            Whole++;
            Threads.Add(Environment.CurrentManagedThreadId);
            Events.AddRange(events);
        }
    }
}
