using System.Globalization;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;
using TraceLab.Formats.Registry;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// Reads trace-cmd trace.dat files (v6, and v7 uncompressed or compressed with zlib or zstd): metadata at
/// <see cref="Open"/>, then the events of one buffer (the top-level one unless
/// <see cref="TraceReadOptions.BufferName"/> names an instance) from every CPU merged in timestamp order.
/// </summary>
public sealed class TraceDatReader : IKernelTraceReader
{
    private readonly SafeFileHandle _handle;
    private readonly string _path;
    private readonly TraceDatMetadata _meta;
    private readonly KernelEventDecoder _decoder;
    private readonly SalvageLog? _salvage;
    private readonly string _buffer;
    private bool _read;

    private TraceDatReader(SafeFileHandle handle, string path, TraceDatMetadata meta, bool salvage, string buffer)
    {
        _handle = handle;
        _path = path;
        _meta = meta;
        _buffer = buffer;
        _salvage = salvage ? new SalvageLog(meta.PageSize, meta.Damage.Where(d => d.Buffer == buffer)) : null;
        Threads = new ThreadTable();
        SavedCmdlines.LoadInto(meta.Cmdlines, Threads);
        _decoder = new KernelEventDecoder(meta.Formats, Threads);
        Info = new TraceInfo
        {
            Backend = "tracefs",
            TraceFile = path,
            CpuCount = meta.CpuCount,
            TraceClock = meta.BufferClocks.GetValueOrDefault(buffer) ?? meta.TraceClock,
            KernelRelease = KernelReleaseOf(meta.Uname),
            Buffers = meta.Buffers.ToArray(),
            Buffer = buffer,
            LostEventsPerCpu = LostPerCpu(meta, buffer),
            PagesWithMissedEvents = new long[meta.CpuCount],
            SkippedFormats = meta.SkippedFormats,
        };
        _salvage?.Describe(Info);
    }

    public TraceInfo Info { get; private set; }
    public ThreadTable Threads { get; }

    /// <summary>Event formats found in the file.</summary>
    public IReadOnlyList<FtraceEventFormat> Formats => _meta.Formats;

    /// <summary>Trace-file version (6 or 7).</summary>
    public int FileVersion => _meta.Version;

    /// <summary>The v7 compression algorithm ("none", "zlib", "zstd"); "none" for v6.</summary>
    public string Compression => _meta.Compression;

    /// <exception cref="TraceFormatException">
    /// The file is truncated, corrupt or of an unsupported kind (when salvaging: its metadata is), or has no buffer
    /// of the requested name.
    /// </exception>
    public static TraceDatReader Open(string path, TraceReadOptions? options = null)
    {
        options ??= TraceReadOptions.Default;
        var salvage = options.Salvage;
        var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.RandomAccess);
        try
        {
            var meta = TraceDatMetadataParser.Parse(new BoundedFileReader(handle, path), salvage);
            var buffer = TraceDatBuffers.Select(meta, options.BufferName, path);
            return new TraceDatReader(handle, path, meta, salvage, buffer);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    /// <summary>Streams every event once; a second call throws because the reader is single-pass.</summary>
    public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
    {
        if (_read)
            throw new InvalidOperationException("TraceDatReader.Read streams the file once; open it again to re-read.");
        _read = true;

        var layout = _meta.HeaderPage!;
        var ranges = _meta.Data.Where(r => r.Size != 0 && r.Buffer == _buffer).ToList();
        using var data = TraceDatData.Open(_handle, _path, ranges.Count);
        using var codec = ranges.Any(r => r.Compressed) ? ChunkCodec.For(_meta.Compression, _path, 0) : null;
        var scratch = new ChunkScratch();
        var time = _meta.Time.IsIdentity ? null : _meta.Time;
        var cursors = new List<CpuCursor>();
        try
        {
            var active = new List<CpuCursor>();
            foreach (var range in ranges)
            {
                var stream = range.Compressed ? new CompressedCpuStream(_handle, _path, codec!, scratch, range) : null;
                var c = new CpuCursor(data, _path, layout, range, stream, time);
                cursors.Add(c);
                if (Advance(c)) active.Add(c);
                else Finish(c);
            }

            Merge(active.ToArray(), sink, cancellationToken);
        }
        finally
        {
            foreach (var c in cursors) c.Dispose();
        }
    }

    /// <summary>Delivers the cursors' events in timestamp order, ties to the cursor earlier in the array.</summary>
    private void Merge(CpuCursor[] active, IKernelEventSink sink, CancellationToken cancellationToken)
    {
        var n = active.Length;
        var run = new RunState { Sink = sink, Cancellation = cancellationToken };
        while (n > 0)
        {
            // The earliest head, ties to the lowest index; the cursor then keeps the floor for as long as its next
            // event would still win that same choice: earlier than every head before it, not later than every head
            // after it (the other heads do not move meanwhile).
            var best = 0;
            var bestTs = active[0].Timestamp;
            for (var i = 1; i < n; i++)
            {
                var ts = active[i].Timestamp;
                if (ts < bestTs) { bestTs = ts; best = i; }
            }

            var limit = long.MaxValue;
            for (var i = 0; i < n; i++)
            {
                if (i == best) continue;
                // bestTs < head here, so head - 1 cannot underflow.
                var bound = i < best ? active[i].Timestamp - 1 : active[i].Timestamp;
                if (bound < limit) limit = bound;
            }

            var cur = active[best];
            if (!DeliverRun(cur, limit, ref run))
            {
                Finish(cur);
                active[best] = active[n - 1];
                n--;
            }
        }

        var count = run.Count;
        var first = run.First;
        var last = run.Last;
        // A new, complete TraceInfo: the one handed out before the read is never written to.
        Info = Info with
        {
            EventCount = count,
            FirstTimestamp = first,
            LastTimestamp = last,
            UnknownEvents = _decoder.UnknownEventCount,
        };
        if (_salvage is not null) Info = _salvage.Describe(Info);
    }

    public void Dispose() => _handle.Dispose();

    /// <summary>What the delivery loop carries from one run to the next.</summary>
    private struct RunState
    {
        public IKernelEventSink Sink;
        public CancellationToken Cancellation;
        public KernelEvent Event;
        public long Count, First, Last;
    }

    /// <summary>
    /// Delivers <paramref name="cur"/>'s events, starting with its current one, while their timestamps stay at or
    /// below <paramref name="limit"/>. Returns false when the cursor is finished (its data ended, or damage when
    /// salvaging) and true when it stopped at an event past the limit, which stays current.
    /// </summary>
    private bool DeliverRun(CpuCursor cur, long limit, ref RunState run)
    {
        var sink = run.Sink;
        var count = run.Count;
        var cpu = cur.Cpu;
        while (true)
        {
            var ts = cur.Timestamp;
            if (!_decoder.Decode(cur.Payload, ts, cpu, ref run.Event))
            {
                var error = new TraceFormatException(_path, cur.PayloadFileOffset,
                    $"an event record long enough for its event type ({cur.Payload.Length} bytes is too short)");
                if (_salvage is null) throw error;
                _salvage.Add(cur, error);
                run.Count = count;
                return false;
            }

            sink.OnEvent(in run.Event);
            if (count == 0) run.First = ts;
            count++;
            run.Last = ts;
            // An exception leaves Read without totals, so the count only needs storing on the way out.
            if ((count & 0xFFFF) == 0) run.Cancellation.ThrowIfCancellationRequested();
            if (!cur.TryMoveNextPlain() && !Advance(cur))
            {
                run.Count = count;
                return false;
            }

            if (cur.Timestamp > limit)
            {
                run.Count = count;
                return true;
            }
        }
    }

    private bool Advance(CpuCursor c)
    {
        try
        {
            return c.MoveNext();
        }
        catch (TraceFormatException error) when (_salvage is not null)
        {
            _salvage.Add(c, error);
            return false;
        }
    }

    /// <summary>A cursor at its end: its missed-event pages are counted and its window released.</summary>
    private void Finish(CpuCursor c)
    {
        c.Dispose();
        var pages = Info.PagesWithMissedEvents!;
        if (c.Cpu >= 0 && c.Cpu < pages.Length) pages[c.Cpu] += c.PagesWithMissedEvents;
    }


    /// <summary>The release is the third word of "Linux host 6.18.0 #1 SMP ... x86_64".</summary>
    private static string? KernelReleaseOf(string? uname)
    {
        if (uname is null) return null;
        var parts = uname.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return parts.Length >= 3 ? parts[2] : uname;
    }

    /// <summary>Loss counts of the buffer being read, per CPU; null when the file has none for it.</summary>
    private static long[]? LostPerCpu(TraceDatMetadata meta, string buffer)
    {
        if (!meta.LostByBuffer.TryGetValue(buffer, out var perCpu)) return null;
        var result = new long[meta.CpuCount];
        foreach (var (cpu, lost) in perCpu)
            if (cpu >= 0 && cpu < result.Length) result[cpu] += lost;
        return result;
    }
}
