using System.Collections.Concurrent;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;

namespace TraceLab.Formats.StackJoin;

/// <summary>
/// A trace read with the stacks of a second recording beside it (<c>tracelab trace --stacks</c>: trace.dat from
/// tracefs, every event and marker; <see cref="StackFile.PathFor"/> from <c>perf record</c>, the same lock syscalls,
/// blocking switches and wakeups with copied user stacks). The events are the trace's; each one the stack recording
/// also holds gets its stack (<see cref="StackJoin"/>); the stacks, module maps and build-ids are the stack
/// recording's. The stack file is read on a second thread, a bounded number of batches ahead of the trace.
/// </summary>
public sealed class StackJoinedReader : IStackTraceReader
{
    private const int BatchSize = 4096;
    private const int BatchesAhead = 16;

    private readonly IKernelTraceReader _events;
    private bool _read;

    private StackJoinedReader(IKernelTraceReader events, PerfDataReader stacks, string stackPath)
    {
        _events = events;
        StackRecording = stacks;
        StackPath = stackPath;
    }

    /// <summary>The trace whose events are read.</summary>
    public IKernelTraceReader Events => _events;

    /// <summary>The stack recording.</summary>
    public PerfDataReader StackRecording { get; }

    /// <summary>The stack recording's file.</summary>
    public string StackPath { get; }

    /// <summary>How the join went; null before <see cref="Read"/>.</summary>
    public StackJoinSummary? Summary { get; private set; }

    public TraceInfo Info => _events.Info;
    public ThreadTable Threads => _events.Threads;
    public bool HasStacks => StackRecording.HasStacks;
    public StackTable Stacks => StackRecording.Stacks;
    public ProcessMaps Maps => StackRecording.Maps;

    /// <summary>
    /// Opens <paramref name="stackPath"/> to join with <paramref name="events"/> (which this reader then owns).
    /// </summary>
    /// <exception cref="TraceFormatException">The stack file is not a readable perf.data.</exception>
    public static StackJoinedReader Open(IKernelTraceReader events, string stackPath, TraceReadOptions options)
    {
        var stacks = PerfDataReader.Open(stackPath, options);
        return new StackJoinedReader(events, stacks, stackPath);
    }

    public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
    {
        if (_read) throw new InvalidOperationException("StackJoinedReader.Read streams the files once.");
        _read = true;
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        using var batches = new BlockingCollection<StackMark[]>(BatchesAhead);
        Exception? producerError = null;
        var producer = new Thread(ReadStacks) { IsBackground = true, Name = "stack file reader" };
        producer.Start();

        void ReadStacks()
        {
            try
            {
                var batcher = new Batcher(batches, stop.Token);
                StackRecording.Read(batcher, stop.Token);
                batcher.Flush();
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                // The trace ended first (or the read was cancelled): nothing more is wanted.
            }
            catch (Exception e)
            {
                producerError = e;
            }
            finally
            {
                batches.CompleteAdding();
            }
        }

        var marks = new MarkCursor(batches, stop.Token);
        var join = new StackJoin(marks.Next);
        try
        {
            var joining = new JoiningSink(sink, join);
            _events.Read(joining, cancellationToken);
            join.Finish(joining.Last);
        }
        finally
        {
            stop.Cancel();
            // Unblocks a producer waiting to add: it sees the cancellation and ends.
            while (batches.TryTake(out _)) { }
            producer.Join();
        }

        // A damaged stack file costs the stacks after the damage, not the trace's analysis.
        if (producerError is not null and not TraceFormatException) throw producerError;
        var lost = StackRecording.Info.LostEventsPerCpu?.Sum() ?? 0;
        Summary = new StackJoinSummary(Path.GetFileName(StackPath), join.Marks, join.Joined, join.Unmatched, lost)
        {
            AfterTrace = join.AfterTrace,
            MaxOffsetNs = join.MaxOffset,
            Damage = producerError?.Message ?? StackRecording.Info.Damage,
        };
    }

    public void Dispose()
    {
        _events.Dispose();
        StackRecording.Dispose();
    }

    /// <summary>Forwards every event, with its stack where the stack recording has one.</summary>
    private sealed class JoiningSink(IKernelEventSink inner, StackJoin join) : IKernelEventSink
    {
        /// <summary>The last event's time.</summary>
        public long Last { get; private set; } = long.MinValue / 2;

        public void OnEvent(in KernelEvent e)
        {
            Last = e.Timestamp;
            var stack = e.StackId == 0 ? join.StackOf(e) : 0;
            if (stack == 0) inner.OnEvent(e);
            else inner.OnEvent(e.WithStack(stack));
        }
    }

    /// <summary>Collects the stack recording's events that carry a stack into batches.</summary>
    private sealed class Batcher(BlockingCollection<StackMark[]> batches, CancellationToken stop) : IKernelEventSink
    {
        private StackMark[] _batch = new StackMark[BatchSize];
        private int _count;

        public void OnEvent(in KernelEvent e)
        {
            if (e.StackId == 0) return;
            _batch[_count++] = StackMark.Of(e);
            if (_count == _batch.Length) Flush();
        }

        public void Flush()
        {
            if (_count == 0) return;
            batches.Add(_count == _batch.Length ? _batch : _batch[.._count], stop);
            _batch = new StackMark[BatchSize];
            _count = 0;
        }
    }

    /// <summary>Hands out the batches' marks one by one, in the order they were read.</summary>
    private sealed class MarkCursor(BlockingCollection<StackMark[]> batches, CancellationToken stop)
    {
        private StackMark[] _batch = [];
        private int _next;

        public StackMark? Next()
        {
            while (_next == _batch.Length)
            {
                if (!batches.TryTake(out var batch, Timeout.Infinite, stop)) return null;
                _batch = batch;
                _next = 0;
            }

            return _batch[_next++];
        }
    }
}

/// <summary>
/// How the stacks of a second recording were joined to a trace's events (docs/metrics.md#stack-join).
/// </summary>
/// <param name="File">The stack recording's file name.</param>
/// <param name="Recorded">Events of the stack recording that carry a stack.</param>
/// <param name="Joined">Events of the trace given one of them.</param>
/// <param name="Unmatched">Stacks no event of the trace took (their events are in the trace's time but not in it).
/// </param>
/// <param name="Lost">Samples the stack recording lost (its buffers full).</param>
public sealed record StackJoinSummary(string File, long Recorded, long Joined, long Unmatched, long Lost)
{
    /// <summary>Stacks recorded after the trace's last event (perf stops after the trace), not joined.</summary>
    public long AfterTrace { get; init; }

    /// <summary>The largest distance in time between a joined event and its stack's event (ns).</summary>
    public long MaxOffsetNs { get; init; }

    /// <summary>Where the stack file was damaged (its stacks after that are missing); null when it was whole.</summary>
    public string? Damage { get; init; }
}
