using System.Runtime.ExceptionServices;
using TraceLab.Core;

namespace TraceLab.Analyzers.Parallel;

/// <summary>
/// Hands one time-ordered event stream to several consumers, each on its own thread: the producer (the trace reader,
/// on the caller's thread) copies events into fixed batches, and every consumer sees every batch in order. Memory is
/// the batch pool (<see cref="PoolSize"/> × <see cref="BatchSize"/> events), whatever the trace length; a full pool
/// makes the reader wait for the slowest consumer. No allocation per event or per batch after construction.
/// <para>
/// A batch holds either whole events or <see cref="PackedEvents"/> (only the non-zero fields: a third of the bytes
/// to move between cores, but unpacking costs the consumer a few ns an event). Which one is chosen per batch by
/// who waits: while consumers keep up (most of the pool is free) the reader is the bottleneck and packs; while the
/// pool runs low the consumers are, and get whole events. The events delivered are the same either way.
/// </para>
/// </summary>
public sealed class EventFanOut : IKernelEventSink, IDisposable
{
    /// <summary>
    /// Events per batch: large enough that the hand-off (two semaphore operations) is noise, small enough to stay in
    /// L2.
    /// </summary>
    public const int BatchSize = 2048;

    /// <summary>
    /// Batches in flight: lets consumers of uneven speed drift apart by this many batches without stalling the reader.
    /// </summary>
    public const int PoolSize = 16;

    /// <summary>
    /// Free batches (after taking one) from which the consumers count as keeping up: the reader then packs.
    /// </summary>
    private const int PackWhenFree = PoolSize / 2;

    /// <summary>
    /// Holds whole or packed events; each form's storage is made the first time the batch is used that way.
    /// </summary>
    private sealed class Batch
    {
        private KernelEvent[]? _events;
        private PackedEvents? _packed;

        public KernelEvent[] Events => _events ??= new KernelEvent[BatchSize];
        public int Count;
        public PackedEvents Packed => _packed ??= new PackedEvents(BatchSize);
        public bool IsPacked;
        public int Pending;
        /// <summary>The end-of-stream marker: consumers stop after it.</summary>
        public bool Last;
    }

    /// <summary>
    /// A consumer's queue: single producer, single consumer, capacity = pool size so it can never overflow.
    /// </summary>
    private sealed class Lane : IDisposable
    {
        public readonly Batch[] Ring = new Batch[PoolSize + 1];
        public readonly SemaphoreSlim Ready = new(0);
        public int Head;
        public int Tail;
        public Thread? Thread;

        public void Dispose() => Ready.Dispose();
    }

    private readonly IKernelEventSink[] _consumers;
    private readonly IEventBatchRecorder? _recorder;
    private readonly bool? _packing;
    private readonly Lane[] _lanes;
    private readonly Stack<Batch> _free = new();
    private readonly SemaphoreSlim _freeCount = new(PoolSize);
    private Batch? _current;
    private ExceptionDispatchInfo? _failure;
    private volatile bool _failed;
    private bool _finished;

    /// <param name="consumers">The sinks, each fed every event on a thread of its own.</param>
    /// <param name="recorder">Also given every batch, on the caller's thread, before the consumers get it (the
    /// first pass's event journal); null: none.</param>
    public EventFanOut(IReadOnlyList<IKernelEventSink> consumers, IEventBatchRecorder? recorder = null)
        : this(consumers, packing: null, recorder)
    {
    }

    /// <param name="packing">Tests: always (true) or never (false) pack, instead of choosing per batch.</param>
    /// <param name="recorder">As in the public constructor.</param>
    internal EventFanOut(IReadOnlyList<IKernelEventSink> consumers, bool? packing,
        IEventBatchRecorder? recorder = null)
    {
        _packing = packing;
        _recorder = recorder;
        if (consumers.Count == 0) throw new ArgumentException("at least one consumer", nameof(consumers));
        _consumers = [.. consumers];
        for (var i = 0; i < PoolSize; i++) _free.Push(new Batch());
        _lanes = new Lane[_consumers.Length];
        for (var i = 0; i < _lanes.Length; i++)
        {
            var lane = _lanes[i] = new Lane();
            var consumer = _consumers[i];
            lane.Thread = new Thread(() => Consume(lane, consumer))
            {
                IsBackground = true,
                Name = $"tracelab-analysis-{i}",
            };
            lane.Thread.Start();
        }
    }

    /// <summary>Batches handed over packed (the rest held whole events).</summary>
    internal long PackedBatches { get; private set; }

    public void OnEvent(in KernelEvent e)
    {
        var b = _current ??= Take();
        if (b.IsPacked)
        {
            b.Packed.Add(e);
            if (!b.Packed.IsFull) return;
        }
        else
        {
            b.Events[b.Count++] = e;
            if (b.Count < BatchSize) return;
        }

        _current = null;
        Publish(b);
    }

    /// <summary>
    /// Delivers what is buffered, waits until every consumer has seen every event, and rethrows the first exception a
    /// consumer raised (with its original stack). Call once, after the last event.
    /// </summary>
    public void Finish()
    {
        if (_finished) throw new InvalidOperationException("EventFanOut.Finish: already finished");
        _finished = true;
        if (_current is { } b)
        {
            _current = null;
            Publish(b);
        }

        var end = Take();
        end.Last = true;
        Publish(end, throwOnFailure: false);
        foreach (var lane in _lanes) lane.Thread!.Join();
        DisposeSemaphores();
        _failure?.Throw();
    }

    /// <summary>Stops the consumers without waiting for a result (after a reader error or cancellation).</summary>
    public void Dispose()
    {
        if (_finished) return;
        _finished = true;
        _failed = true;
        var end = Take();
        end.Last = true;
        Publish(end, throwOnFailure: false);
        foreach (var lane in _lanes) lane.Thread!.Join();
        DisposeSemaphores();
    }

    /// <summary>
    /// After the consumers have stopped: frees the wait handles <see cref="WaitWithoutSpinning"/> created.
    /// </summary>
    private void DisposeSemaphores()
    {
        _freeCount.Dispose();
        foreach (var lane in _lanes) lane.Dispose();
    }

    private Batch Take()
    {
        WaitWithoutSpinning(_freeCount);
        Batch b;
        lock (_free) b = _free.Pop();
        b.Count = 0;
        b.IsPacked = _packing ?? _freeCount.CurrentCount >= PackWhenFree;
        if (b.IsPacked)
        {
            b.Packed.Clear();
            PackedBatches++;
        }
        b.Last = false;
        return b;
    }

    private void Publish(Batch b, bool throwOnFailure = true)
    {
        // A consumer that failed stops consuming; surfacing its error here ends the reader's loop at once.
        if (throwOnFailure && _failed) _failure?.Throw();
        if (_recorder is { } recorder && !b.Last)
        {
            if (b.IsPacked) recorder.Packed(b.Packed.Bytes, b.Packed.Count, b.Packed.Texts);
            else recorder.Whole(b.Events.AsSpan(0, b.Count));
        }
        b.Pending = _lanes.Length;
        foreach (var lane in _lanes)
        {
            lane.Ring[lane.Tail] = b;
            lane.Tail = lane.Tail == PoolSize ? 0 : lane.Tail + 1;
            lane.Ready.Release();
        }
    }

    /// <summary>
    /// SemaphoreSlim.Wait spins before it blocks. The faster side of the pipeline (the reader, or the analysis thread
    /// when the reader is the slower) waits once per batch, and its spinning takes CPU time — on a machine whose two
    /// vCPUs may share a core, from the other thread. Each semaphore here has a single waiter, so when the handle says
    /// a count is available, the next try takes it.
    /// </summary>
    private static void WaitWithoutSpinning(SemaphoreSlim semaphore)
    {
        while (!semaphore.Wait(0)) semaphore.AvailableWaitHandle.WaitOne();
    }

    private void Release(Batch b)
    {
        if (Interlocked.Decrement(ref b.Pending) != 0) return;
        lock (_free) _free.Push(b);
        _freeCount.Release();
    }

    private static void Unpack(PackedEvents packed, IKernelEventSink consumer)
    {
        var e = default(KernelEvent);
        for (int i = 0, at = 0; i < packed.Count; i++)
        {
            at = packed.Read(at, ref e);
            consumer.OnEvent(in e);
        }
    }

    private void Consume(Lane lane, IKernelEventSink consumer)
    {
        while (true)
        {
            WaitWithoutSpinning(lane.Ready);
            var b = lane.Ring[lane.Head];
            lane.Head = lane.Head == PoolSize ? 0 : lane.Head + 1;
            var last = b.Last;
            if (!_failed)
            {
                try
                {
                    if (b.IsPacked) Unpack(b.Packed, consumer);
                    else
                    {
                        var events = b.Events;
                        for (var i = 0; i < b.Count; i++) consumer.OnEvent(in events[i]);
                    }
                }
                catch (Exception ex)
                {
                    lock (_lanes)
                    {
                        _failure ??= ExceptionDispatchInfo.Capture(ex);
                        _failed = true;
                    }
                }
            }

            Release(b);
            if (last) return;
        }
    }
}
